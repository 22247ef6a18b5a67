/// A proven lower bound on real time, carried forward along the boot clock only
/// (<doc:Rules#Boot-clock-floor>).
///
/// An online sign-in sets ``lowerBound`` to its wall time, the one moment the wall clock is
/// trusted, and anchors it at that boot-clock reading. Each observation adds the boot time that
/// passed since the anchor (same boot: `boot_now − anchor`; another boot: `boot_now`, since the
/// reboot came after the anchor) and re-anchors. The wall clock never raises it, so drift does
/// not accumulate.
///
/// All arithmetic is on whole nanoseconds and saturates instead of trapping or wrapping
/// (<doc:Rules#Typed-time>), whatever a decoded record or a reading holds.
public struct BootClockFloor: Sendable, Hashable {
  /// `L`: real time is at least this, as far as the boot clock can prove.
  public var lowerBound: WallClockInstant
  /// The boot of the anchor; ``BootID/none`` when no anchor is recorded (no boot clock, or the
  /// floor is off).
  public var anchorBootID: BootID
  /// The boot-clock reading (nanoseconds since boot) at which ``lowerBound`` held.
  public var anchorSinceBoot: Duration
  /// Boot-clock time accumulated since the last online sign-in (drives the 500 ppm tolerance).
  public var elapsedSinceSignIn: Duration
  /// Set when the boot clock went backward within one boot (or read negative): the floor cannot
  /// be trusted until an online sign-in re-anchors it.
  public var isUntrusted: Bool

  /// Creates a floor.
  ///
  /// - Parameters:
  ///   - lowerBound: `L`, the proven lower bound on real time.
  ///   - anchorBootID: The boot `L` is anchored to, or ``BootID/none``.
  ///   - anchorSinceBoot: The boot-clock reading at the anchor, in nanoseconds since boot.
  ///   - elapsedSinceSignIn: Boot time accumulated since the last online sign-in.
  ///   - isUntrusted: Whether the anchor is untrusted.
  public init(
    lowerBound: WallClockInstant, anchorBootID: BootID, anchorSinceBoot: Duration,
    elapsedSinceSignIn: Duration, isUntrusted: Bool
  ) {
    self.lowerBound = lowerBound
    self.anchorBootID = anchorBootID
    self.anchorSinceBoot = anchorSinceBoot
    self.elapsedSinceSignIn = elapsedSinceSignIn
    self.isUntrusted = isUntrusted
  }

  /// Whether an anchor is recorded.
  public var isAnchored: Bool { anchorBootID != .none }

  /// The floor set by an online sign-in at `wall`, anchored at `boot`.
  ///
  /// - Parameters:
  ///   - wall: The sign-in's wall time, which becomes ``lowerBound``.
  ///   - boot: The boot-clock reading at the sign-in. `nil`, a reading with the ``BootID/none``
  ///     id or a negative reading leaves the floor unanchored (it then never advances).
  /// - Returns: A trusted floor with no elapsed time.
  public static func signIn(at wall: WallClockInstant, boot: BootClockReading?) -> BootClockFloor {
    guard let boot, boot.bootID != .none, boot.sinceBoot >= .zero else {
      return BootClockFloor(
        lowerBound: wall, anchorBootID: .none, anchorSinceBoot: .zero, elapsedSinceSignIn: .zero,
        isUntrusted: false)
    }
    return BootClockFloor(
      lowerBound: wall, anchorBootID: boot.bootID, anchorSinceBoot: boot.sinceBoot,
      elapsedSinceSignIn: .zero, isUntrusted: false)
  }

  /// The floor carried forward to a new boot-clock reading.
  ///
  /// Same boot: `L += boot_now − anchor`; another boot: `L += boot_now` (the reboot came after
  /// the anchor, so at least the current uptime has passed). Then the anchor moves to `boot`.
  ///
  /// - Parameter boot: The reading of this observation, or `nil` when no boot clock is available.
  /// - Returns: The advanced, re-anchored floor. Unchanged when `boot` is `nil` or carries the
  ///   ``BootID/none`` id, or when the floor is unanchored or already untrusted. When the boot
  ///   clock went backward on the same boot, or reads negative, the floor is returned unchanged
  ///   but marked untrusted. Saturates rather than overflowing.
  public func advanced(to boot: BootClockReading?) -> BootClockFloor {
    guard let boot, boot.bootID != .none, isAnchored, !isUntrusted else { return self }
    var next = self
    let now = boot.sinceBoot.clampedNanoseconds
    guard now >= 0 else {
      next.isUntrusted = true
      return next
    }
    let elapsed: Int64
    if boot.bootID == anchorBootID {
      let anchor = anchorSinceBoot.clampedNanoseconds
      guard now >= anchor else {
        next.isUntrusted = true
        return next
      }
      let (difference, overflow) = now.subtractingReportingOverflow(anchor)
      elapsed = overflow ? .max : difference
    } else {
      elapsed = now
    }
    let (total, overflow) = elapsedSinceSignIn.clampedNanoseconds.addingReportingOverflow(elapsed)
    next.lowerBound = lowerBound.saturatingAdvanced(by: .nanoseconds(elapsed))
    next.elapsedSinceSignIn = .nanoseconds(overflow ? .max : total)
    next.anchorBootID = boot.bootID
    next.anchorSinceBoot = .nanoseconds(now)
    return next
  }
}

extension Duration {
  /// Whole nanoseconds clamped to `Int64.min...Int64.max` (sub-nanosecond parts truncated).
  var clampedNanoseconds: Int64 {
    if let exact = exactNanoseconds { return exact }
    return self < .zero ? .min : .max
  }
}
