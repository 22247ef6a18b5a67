/// The boot-clock floor as an ``OfflinePolicy`` (<doc:Rules#Boot-clock-floor>): the checks of
/// ``BootClockFloorCheck`` over the record's floor carried forward to this decision's boot
/// reading, when ``EligibilityPolicy/usesBootClockFloor`` is on.
///
/// Evidence the policy asks for and cannot get is a refusal, never a silent downgrade: with the
/// floor on, a decision whose boot clock cannot be read (no boot clock on this platform, or a
/// boot id hidden from this process), or whose record has no boot anchor (the last online
/// sign-in had no boot clock), is refused with `boot_clock_unavailable` and the floor's
/// protection is `unavailable`. On a system without a boot clock, turn the floor off
/// (`EligibilityPolicy(maxAge:usesBootClockFloor: false)`, or `--no-boot-floor` on the command
/// line): decisions are then the mark rule's alone, and the protection reads `off`.
///
/// While a server anchor holds, trusted time decides (``TrustedTimeRule``) and the floor is not
/// judged (its protection reads `superseded`); the record keeps it at the trusted time, so when
/// the anchor stops holding the floor starts from the last trusted time.
public struct BootClockFloorRule: OfflinePolicy {
  /// Creates the rule.
  public init() {}

  /// Judges one decision.
  ///
  /// - Parameters:
  ///   - inputs: The items, the boot reading and the record after this observation.
  ///   - policy: Supplies the max age, the tolerance and whether the floor is used.
  /// - Returns: The floor's reasons, `max(wall, L)` as its effective time, and the check (while a
  ///   server anchor holds: no reason, the trusted time, `superseded`).
  /// - Complexity: O(1); no heap allocation.
  public func verdict(for inputs: OfflineDecisionInputs, policy: EligibilityPolicy)
    -> OfflinePolicyVerdict
  {
    let trustedNow = inputs.trustedTime?.trustedNow
    return verdict(
      for: inputs, policy: policy, trustedNow: trustedNow, time: trustedNow ?? inputs.reading.wall)
  }

  /// ``verdict(for:policy:)`` with trusted time already judged: `trustedNow` is
  /// ``OfflineDecisionInputs/trustedTime``'s, `time` is ``OfflineDecisionInputs/time``.
  func verdict(
    for inputs: OfflineDecisionInputs, policy: EligibilityPolicy, trustedNow: WallClockInstant?,
    time: WallClockInstant
  ) -> OfflinePolicyVerdict {
    let wall = inputs.reading.wall
    guard policy.usesBootClockFloor else {
      return OfflinePolicyVerdict(reasons: [], effectiveNow: time, protection: .off)
    }
    if let trustedNow {
      return OfflinePolicyVerdict(reasons: [], effectiveNow: trustedNow, protection: .superseded)
    }
    guard let floor = inputs.record?.floor else {
      // No record: the mark's failure refuses; there is no floor to judge.
      return OfflinePolicyVerdict(reasons: [], effectiveNow: wall, protection: .unavailable)
    }
    guard Self.isAvailable(reading: inputs.reading.boot, floor: floor) else {
      return OfflinePolicyVerdict(
        reasons: .bootClockUnavailable, effectiveNow: wall, protection: .unavailable)
    }
    let check = BootClockFloorCheck(
      floor: floor, wall: wall, items: inputs.items ?? .empty, policy: policy)
    return OfflinePolicyVerdict(
      reasons: check.reasons, effectiveNow: check.effectiveNow, protection: .active,
      floorCheck: check)
  }

  /// Whether the floor can be judged: a boot reading with a boot id now, and a floor anchored
  /// to a boot (by the last online sign-in).
  ///
  /// - Parameters:
  ///   - reading: This decision's boot reading, `nil` when unreadable.
  ///   - floor: The record's floor.
  /// - Returns: `true` when both exist.
  public static func isAvailable(reading: BootClockReading?, floor: BootClockFloor) -> Bool {
    guard let reading, reading.bootID != .none else { return false }
    return floor.isAnchored
  }
}
