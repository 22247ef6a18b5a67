/// Whether one protection took part in a decision.
public enum ProtectionState: String, Sendable, Hashable, CustomStringConvertible {
  /// Applied to this decision.
  case active
  /// Turned off by the policy (for example ``EligibilityPolicy/usesBootClockFloor`` false).
  case off
  /// Asked for but not possible for this decision: the evidence it needs is missing (no
  /// readable mark, or no boot clock in this process or at the last sign-in). A decision with
  /// an unavailable protection is refused.
  case unavailable

  /// `active`, `off` or `unavailable`.
  public var description: String { rawValue }
}

/// The protections a decision applied, so an app can tell when one is missing.
public struct OfflineProtections: Sendable, Hashable {
  /// The mark rule (a wall clock behind the stored high-water mark is a rollback):
  /// `active` whenever a mark was read or created, `unavailable` when none could be read.
  public var markRule: ProtectionState
  /// The boot-clock floor: `active`, `off` (the policy turns it off) or `unavailable` (this
  /// process has no readable boot clock, or the last online sign-in had none to anchor it).
  public var bootClockFloor: ProtectionState

  /// Creates the set.
  public init(markRule: ProtectionState, bootClockFloor: ProtectionState) {
    self.markRule = markRule
    self.bootClockFloor = bootClockFloor
  }
}
