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
  /// Not needed for this decision because a stronger one decided it: while a server anchor
  /// holds, trusted time (carried by clocks nobody can set) judges age and rollback, and the
  /// boot-clock floor is kept at the last trusted time for when the anchor stops holding.
  case superseded

  /// `active`, `off`, `unavailable` or `superseded`.
  public var description: String { rawValue }
}

/// Whether a server anchor (``OfflineAccessGate/beginOnlineSession(serverTime:uncertainty:)``)
/// decided the time of a decision.
public enum ServerAnchorState: String, Sendable, Hashable, CustomStringConvertible {
  /// The anchor holds: the decision's time is trusted time.
  case holding
  /// The last online sign-in gave no server time (or no record could be read): the wall clock,
  /// the mark rule and the boot-clock floor decide.
  case none
  /// The last online sign-in anchored trusted time, but it does not hold for this decision (a
  /// reboot no clock could carry it across, or the TPM that carried it is not the recorded one):
  /// the mark rule and the floor, at the last trusted time, decide until the next online sign-in.
  case lost

  /// `holding`, `none` or `lost`.
  public var description: String { rawValue }
}

/// Whether a TPM clock (``Clocks/tpm``) took part in a decision.
public enum TPMClockState: String, Sendable, Hashable, CustomStringConvertible {
  /// The TPM answered and is the one the record was written with.
  case inUse = "in_use"
  /// The gate has no TPM clock.
  case notConfigured = "not_configured"
  /// A TPM is configured but could not be read, or is not the recorded one: the decision is
  /// refused (`tpm_unavailable`, `tpm_changed`).
  case unavailable

  /// `in_use`, `not_configured` or `unavailable`.
  public var description: String { rawValue }
}

/// The protections a decision applied, so an app can tell when one is missing
/// (<doc:Rules#Protections-named>).
public struct OfflineProtections: Sendable, Hashable {
  /// The mark rule (a wall clock behind the stored high-water mark is a rollback):
  /// `active` whenever a mark was read or created, `unavailable` when none could be read.
  public var markRule: ProtectionState
  /// The boot-clock floor: `active`, `off` (the policy turns it off), `unavailable` (this
  /// process has no readable boot clock, or the last online sign-in had none to anchor it) or
  /// `superseded` (a server anchor holds).
  public var bootClockFloor: ProtectionState
  /// The server anchor of trusted time: `holding`, `none` or `lost`.
  public var serverAnchor: ServerAnchorState
  /// The TPM clock: `in_use`, `not_configured` or `unavailable`.
  public var tpmClock: TPMClockState

  /// Creates the set.
  ///
  /// - Parameters:
  ///   - markRule: The mark rule's state.
  ///   - bootClockFloor: The boot-clock floor's state.
  ///   - serverAnchor: The server anchor's state; `none` by default.
  ///   - tpmClock: The TPM clock's state; `not_configured` by default.
  public init(
    markRule: ProtectionState, bootClockFloor: ProtectionState,
    serverAnchor: ServerAnchorState = .none, tpmClock: TPMClockState = .notConfigured
  ) {
    self.markRule = markRule
    self.bootClockFloor = bootClockFloor
    self.serverAnchor = serverAnchor
    self.tpmClock = tpmClock
  }
}
