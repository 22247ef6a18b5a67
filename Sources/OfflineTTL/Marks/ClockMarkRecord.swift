/// What a ``ClockMarkStore`` keeps: the clock mark, its generation and the boot-clock floor.
///
/// The on-disk format of ``FileClockMarkStore`` is documented byte by byte in
/// `docs/mark-record-format.md`.
public struct ClockMarkRecord: Sendable, Hashable {
  /// Incremented by each online sign-in; never by an offline path.
  public var generation: UInt64
  /// The clock mark: the latest wall-clock time ever observed for this cache (the high-water
  /// mark). Never decreases except through an online sign-in (<doc:Rules#Clock-mark>).
  public var mark: WallClockInstant
  /// The boot-clock floor (<doc:Rules#Boot-clock-floor>).
  public var floor: BootClockFloor

  /// Creates a record.
  public init(generation: UInt64, mark: WallClockInstant, floor: BootClockFloor) {
    self.generation = generation
    self.mark = mark
    self.floor = floor
  }
}

/// One reading of the clocks, as handed to a ``ClockMarkStore``: what ``Clocks`` returns.
///
/// It holds readings only; how much a mark must rise to be written is an argument of the store
/// operation (``ClockMarkStore/observe(resolution:readingClocks:)``), not part of a reading.
public struct ClockObservation: Sendable, Hashable {
  /// The wall clock now.
  public var wall: WallClockInstant
  /// The boot clock now, or `nil` when this process has no readable boot clock.
  public var boot: BootClockReading?

  /// Creates an observation.
  ///
  /// - Parameters:
  ///   - wall: The wall-clock reading.
  ///   - boot: The boot-clock reading, or `nil` for none.
  public init(wall: WallClockInstant, boot: BootClockReading? = nil) {
    self.wall = wall
    self.boot = boot
  }
}

extension ClockMarkRecord {
  /// The record after an observation: mark `max(mark, wall)` (the clock mark rule), floor carried
  /// forward along the boot clock. Generation unchanged. Pure; shared by every store so that all
  /// backends advance the mark identically.
  ///
  /// - Parameter observation: The clocks now.
  /// - Returns: The advanced record.
  public func observing(_ observation: ClockObservation) -> ClockMarkRecord {
    ClockMarkRecord(
      generation: generation,
      mark: Swift.max(mark, observation.wall),
      floor: floor.advanced(to: observation.boot))
  }

  /// Whether `next` (from ``observing(_:)``) must be written, or may be skipped under the mark
  /// resolution.
  ///
  /// A write is needed when the mark rises by at least the resolution (any rise when the
  /// resolution is zero), when the floor's lower bound rises by at least the resolution, when the
  /// floor becomes untrusted, or when the anchor moves to another boot. Within one boot a skipped
  /// floor is recomputed from the stored anchor, but after a reboot only the new uptime is added
  /// to the stored bound: boot time never written would be lost. Writing when the floor rises
  /// keeps that loss below the resolution, also while the wall clock is held still (a held clock
  /// never raises the mark).
  ///
  /// - Parameters:
  ///   - next: The record after the observation.
  ///   - resolution: The smallest rise worth a write; zero or less writes every observation.
  /// - Returns: `true` when `next` must be made durable before a decision is returned.
  public func needsWrite(becoming next: ClockMarkRecord, resolution: Duration) -> Bool {
    if next.floor.isUntrusted != floor.isUntrusted { return true }
    if next.floor.anchorBootID != floor.anchorBootID { return true }
    if resolution <= .zero { return true }
    if next.mark > mark, mark.duration(to: next.mark) >= resolution { return true }
    let floorRise = floor.lowerBound.duration(to: next.floor.lowerBound)
    return floorRise >= resolution
  }

  /// The generation an online sign-in writes after `generation`: one more, except after
  /// `UInt64.max` (which only a crafted record holds), where it is 1. It never wraps to 0, the
  /// generation of a record created by trust-on-first-use, and it always differs from
  /// `generation`, so a session of the crafted generation is superseded.
  ///
  /// - Parameter generation: The stored generation.
  /// - Returns: The next generation, in `1...UInt64.max`.
  public static func generation(after generation: UInt64) -> UInt64 {
    generation == .max ? 1 : generation + 1
  }

  /// The record an online sign-in writes: the given generation, mark = `wall` (even when lower
  /// than the old mark: the recovery path after a fast clock was corrected), floor re-anchored.
  public static func afterOnlineSignIn(
    generation: UInt64, at observation: ClockObservation
  ) -> ClockMarkRecord {
    ClockMarkRecord(
      generation: generation, mark: observation.wall,
      floor: .signIn(at: observation.wall, boot: observation.boot))
  }
}
