/// Trusted time as an ``OfflinePolicy``: while a server anchor holds
/// (``OfflineAccessGate/beginOnlineSession(serverTime:uncertainty:)``), the time of the decision
/// is the trusted time carried by the boot and TPM clocks (``TrustedTime``), and the other rules
/// judge from it (``OfflineDecisionInputs/time``); a configured TPM that cannot be read, or is
/// not the recorded one, is a refusal.
///
/// It refuses with `tpm_unavailable` or `tpm_changed` (an online sign-in re-anchors). It reports
/// the server anchor (`holding`, `none`, `lost`) and the TPM clock (`in_use`, `not_configured`,
/// `unavailable`) in ``OfflineProtections``. When no anchor holds it changes nothing: the mark
/// rule and the boot-clock floor (at the last trusted time) decide from the wall reading.
public struct TrustedTimeRule: OfflinePolicy {
  /// Creates the rule.
  public init() {}

  /// Judges one decision.
  ///
  /// - Parameters:
  ///   - inputs: The clocks (with the TPM's reading or failure) and the record before and after
  ///     this observation.
  ///   - policy: Unused: trusted time applies whenever a server anchor holds.
  /// - Returns: The TPM's reasons, the trusted time (or the wall reading) as the effective time,
  ///   and `active` while an anchor holds, else `off` (the anchor's and the TPM's own states are
  ///   ``states(for:)``'s).
  /// - Complexity: O(1); no heap allocation.
  public func verdict(for inputs: OfflineDecisionInputs, policy: EligibilityPolicy)
    -> OfflinePolicyVerdict
  {
    let verdict = inputs.trustedTime
    return self.verdict(
      for: inputs, trustedNow: verdict?.trustedNow, reasons: verdict?.reasons ?? [])
  }

  /// ``verdict(for:policy:)`` with trusted time already judged: `trustedNow` and `reasons` are
  /// those of ``OfflineDecisionInputs/trustedTime`` (`nil` and none without it).
  func verdict(
    for inputs: OfflineDecisionInputs, trustedNow: WallClockInstant?, reasons: EligibilityReasons
  ) -> OfflinePolicyVerdict {
    OfflinePolicyVerdict(
      reasons: reasons, effectiveNow: trustedNow ?? inputs.reading.wall,
      protection: trustedNow != nil ? .active : .off)
  }

  /// The server anchor's and the TPM clock's states for one decision.
  ///
  /// The anchor is `holding` while the decision's time is trusted time; `lost` when the record
  /// before this observation still names an anchor that does not hold now, or keeps trusted time
  /// that no TPM carried (which only a server anchor starts); else `none`. The TPM is
  /// `unavailable` when configured but unreadable or not the recorded one, `in_use` when it
  /// answered, else `not_configured`.
  ///
  /// - Parameter inputs: The decision's inputs.
  /// - Returns: Both states.
  /// - Complexity: O(1).
  public func states(for inputs: OfflineDecisionInputs) -> (ServerAnchorState, TPMClockState) {
    let verdict = inputs.trustedTime
    return states(
      for: inputs, trustedNow: verdict?.trustedNow, tpmRefused: verdict?.tpmError != nil)
  }

  /// ``states(for:)`` with trusted time already judged: `trustedNow` is
  /// ``OfflineDecisionInputs/trustedTime``'s, `tpmRefused` whether it has a TPM error.
  func states(for inputs: OfflineDecisionInputs, trustedNow: WallClockInstant?, tpmRefused: Bool)
    -> (ServerAnchorState, TPMClockState)
  {
    let anchor: ServerAnchorState
    if trustedNow != nil {
      anchor = .holding
    } else if let before = inputs.trustedTimeBefore, before.anchor != nil || before.lastTPM == nil {
      anchor = .lost
    } else {
      anchor = .none
    }
    let tpm: TPMClockState
    if inputs.reading.hasTPMError || tpmRefused {
      tpm = .unavailable
    } else if inputs.reading.hasTPMReading {
      tpm = .inUse
    } else {
      tpm = .notConfigured
    }
    return (anchor, tpm)
  }
}
