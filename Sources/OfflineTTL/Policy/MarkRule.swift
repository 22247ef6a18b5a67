/// The mark rule as an ``OfflinePolicy``: the eligibility rule of
/// ``EligibilityPolicy/evaluate(_:now:mark:)`` over the decision's time
/// (``OfflineDecisionInputs/time``: the wall reading, or the trusted time while a server anchor
/// holds) and the stored mark (<doc:Rules#Eligibility-rule>, <doc:Rules#Clock-mark>).
///
/// It refuses with `clock_behind_mark` (the time reads earlier than the stored mark),
/// `item_from_future` and `too_old` (judged from that time). Without a readable mark its
/// protection is `unavailable` (the store's failure is the refusal's reason); on first use (no
/// mark yet) the mark is the wall reading, as the rule says.
public struct MarkRule: OfflinePolicy {
  /// Creates the rule.
  public init() {}

  /// Judges one decision.
  ///
  /// - Parameters:
  ///   - inputs: The items, the clocks and the mark before this observation.
  ///   - policy: Supplies the max age.
  /// - Returns: The rule's reasons; its effective time is ``OfflineDecisionInputs/time``.
  /// - Complexity: O(1); no heap allocation.
  public func verdict(for inputs: OfflineDecisionInputs, policy: EligibilityPolicy)
    -> OfflinePolicyVerdict
  {
    verdict(for: inputs, policy: policy, time: inputs.time)
  }

  /// ``verdict(for:policy:)`` judged from `time` (``OfflineDecisionInputs/time``, already known).
  func verdict(
    for inputs: OfflineDecisionInputs, policy: EligibilityPolicy, time now: WallClockInstant
  )
    -> OfflinePolicyVerdict
  {
    let protection: ProtectionState = inputs.record == nil ? .unavailable : .active
    var reasons: EligibilityReasons = []
    if let items = inputs.items, items.count > 0 {
      reasons = policy.reasons(items, now: now, mark: inputs.previousMark)
    } else if let previous = inputs.previousMark, now < previous {
      // Without items (or with unreadable ones) the mark is still compared with the clock.
      reasons = .clockBehindMark
    }
    return OfflinePolicyVerdict(reasons: reasons, effectiveNow: now, protection: protection)
  }
}
