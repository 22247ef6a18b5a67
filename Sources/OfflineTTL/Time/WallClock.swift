import Foundation

/// A source of wall-clock time, injected wherever OfflineTTL reads "now".
///
/// The library reads the clock at decision time, never once at construction (a captured
/// "validation time" is a known bug class: apple/swift-certificates deprecated one for it).
/// Conformers must be safe to call from any thread. ``SystemWallClock`` is the default; the
/// `OfflineTTLTesting` product adds a manual clock that can be set, advanced and moved backward,
/// and an unimplemented clock that fails a test when read.
public protocol WallClock: Sendable {
  /// The current wall-clock time.
  func now() -> WallClockInstant
}

/// The system's wall clock (`CLOCK_REALTIME`): the clock a user can move.
public struct SystemWallClock: WallClock {
  /// Creates the system clock.
  public init() {}

  /// Reads `CLOCK_REALTIME` with `clock_gettime(2)`, in nanoseconds.
  public func now() -> WallClockInstant {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    // Seconds of today's clock times 10⁹ fit in Int64 until 2262; saturate beyond.
    let (scaled, overflow) = Int64(spec.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return spec.tv_sec < 0 ? .min : .max }
    return WallClockInstant(
      nanosecondsSinceEpoch: scaled.addingReportingOverflow(Int64(spec.tv_nsec)).partialValue)
  }
}

extension WallClock where Self == SystemWallClock {
  /// The system's wall clock.
  public static var system: SystemWallClock { SystemWallClock() }
}
