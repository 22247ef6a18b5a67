/// A proven lower bound on real time, carried forward along the boot clock only
/// (DESIGN rule 9; beyond the seed).
///
/// An online sign-in sets ``lowerBound`` to its wall time, the one moment the wall clock is
/// trusted, and anchors it at that boot-clock reading. Each observation adds the boot time that
/// passed since the anchor (same boot: `boot_now − anchor`; another boot: `boot_now`, since the
/// reboot came after the anchor) and re-anchors. The wall clock never raises it, so drift does
/// not accumulate.
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
  /// Set when the boot clock went backward within one boot: the floor cannot be trusted until
  /// an online sign-in re-anchors it.
  public var isUntrusted: Bool

  /// Creates a floor.
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

  /// The floor set by an online sign-in at `wall`, anchored at `boot` (unanchored without one).
  public static func signIn(at wall: WallClockInstant, boot: BootClockReading?) -> BootClockFloor {
    BootClockFloor(
      lowerBound: wall, anchorBootID: boot?.bootID ?? .none,
      anchorSinceBoot: boot?.sinceBoot ?? .zero, elapsedSinceSignIn: .zero, isUntrusted: false)
  }

  /// The floor carried forward to a new boot-clock reading.
  ///
  /// - Parameter boot: The reading of this observation, or `nil` when no boot clock is available
  ///   (the floor is then returned unchanged).
  /// - Returns: The advanced, re-anchored floor; or, when the boot clock went backward on the
  ///   same boot, the floor unchanged but marked untrusted. An untrusted or unanchored floor is
  ///   returned unchanged. Saturates rather than overflowing.
  public func advanced(to boot: BootClockReading?) -> BootClockFloor {
    guard let boot, isAnchored, !isUntrusted else { return self }
    var next = self
    let elapsed: Duration
    if boot.bootID == anchorBootID {
      guard boot.sinceBoot >= anchorSinceBoot else {
        next.isUntrusted = true
        return next
      }
      elapsed = boot.sinceBoot - anchorSinceBoot
    } else {
      elapsed = Swift.max(boot.sinceBoot, .zero)
    }
    next.lowerBound = lowerBound.saturatingAdvanced(by: elapsed)
    next.elapsedSinceSignIn = elapsedSinceSignIn + elapsed
    next.anchorBootID = boot.bootID
    next.anchorSinceBoot = boot.sinceBoot
    return next
  }
}
