/// One rule of the offline decision, judged over the shared ``OfflineDecisionInputs``: it meets
/// (no reasons) or fails with reasons, says which time it judged age from, and whether its
/// protection was applied.
///
/// The gate composes the rules with ``OfflinePolicySet``: trusted time (``TrustedTimeRule``),
/// the mark rule (``MarkRule``) and the boot-clock floor (``BootClockFloorRule``). Each is pure:
/// it reads no clock and touches no storage.
public protocol OfflinePolicy: Sendable {
  /// Judges one decision.
  ///
  /// - Parameters:
  ///   - inputs: The items, the clocks and the mark record.
  ///   - policy: The max age and the options.
  /// - Returns: The reasons this rule finds, its effective time and its protection's state.
  func verdict(for inputs: OfflineDecisionInputs, policy: EligibilityPolicy) -> OfflinePolicyVerdict
}

/// One rule's answer.
public struct OfflinePolicyVerdict: Sendable, Hashable {
  /// The reasons this rule refuses for; empty when it is met.
  public var reasons: EligibilityReasons
  /// The time this rule judged age from: the wall reading, the floor when it proves more time
  /// passed, or the trusted time while a server anchor holds (which can be earlier than a fast
  /// wall clock).
  public var effectiveNow: WallClockInstant
  /// Whether this rule's protection was applied, turned off, or could not be applied.
  public var protection: ProtectionState
  /// The boot-clock floor's details, from ``BootClockFloorRule`` when it ran.
  public var floorCheck: BootClockFloorCheck?

  /// Creates a verdict.
  public init(
    reasons: EligibilityReasons, effectiveNow: WallClockInstant, protection: ProtectionState,
    floorCheck: BootClockFloorCheck? = nil
  ) {
    self.reasons = reasons
    self.effectiveNow = effectiveNow
    self.protection = protection
    self.floorCheck = floorCheck
  }
}

/// The rules of the offline decision run in sequence over the same inputs (as swift-certificates'
/// `PolicyBuilder` runs verifier policies): the reasons are united, the effective time is the
/// latest any rule proved, and each rule's protection is reported (<doc:Rules#Protections-named>).
///
/// The rules: trusted time (``TrustedTimeRule``: while a server anchor holds, the time every rule
/// judges from is the trusted time, ``OfflineDecisionInputs/time``), the mark rule
/// (``MarkRule``) and the boot-clock floor (``BootClockFloorRule``, `superseded` while the anchor
/// holds).
public struct OfflinePolicySet: Sendable {
  /// Trusted time and the TPM clock.
  public var trustedTime = TrustedTimeRule()
  /// The mark rule.
  public var markRule = MarkRule()
  /// The boot-clock floor.
  public var bootClockFloor = BootClockFloorRule()

  /// Creates the gate's rule set: trusted time, the mark rule, then the boot-clock floor.
  public init() {}

  /// Runs every rule and combines their verdicts.
  ///
  /// - Parameters:
  ///   - inputs: The items, the clocks and the mark record.
  ///   - policy: The max age and the options.
  /// - Returns: The combined evaluation.
  /// - Complexity: O(1); no heap allocation.
  public func evaluate(_ inputs: OfflineDecisionInputs, policy: EligibilityPolicy)
    -> OfflineEvaluation
  {
    // Trusted time is judged once here and handed to every rule (each rule's own
    // `verdict(for:policy:)` judges it from the inputs again); the verdicts are the same.
    // Only the parts the rules need are passed on (the verdict itself is large).
    let verdict = inputs.trustedTime
    let trustedNow = verdict?.trustedNow
    let trusted = trustedTime.verdict(
      for: inputs, trustedNow: trustedNow, reasons: verdict?.reasons ?? [])
    let mark = markRule.verdict(for: inputs, policy: policy, time: trusted.effectiveNow)
    let floor = bootClockFloor.verdict(
      for: inputs, policy: policy, trustedNow: trustedNow, time: trusted.effectiveNow)
    let effective = Swift.max(
      Swift.max(trusted.effectiveNow, mark.effectiveNow), floor.effectiveNow)
    var deadline: WallClockInstant?
    if let oldest = inputs.items?.oldest {
      deadline = policy.deadline(oldest: oldest)
    }
    let (anchor, tpm) = trustedTime.states(
      for: inputs, trustedNow: trustedNow, tpmRefused: verdict?.tpmError != nil)
    return OfflineEvaluation(
      reasons: trusted.reasons.union(mark.reasons).union(floor.reasons), effectiveNow: effective,
      deadline: deadline,
      protections: OfflineProtections(
        markRule: mark.protection, bootClockFloor: floor.protection, serverAnchor: anchor,
        tpmClock: tpm),
      floorCheck: floor.floorCheck, trustedTime: verdict.map(OutOfLine.init))
  }
}

/// The combined verdict of the offline rules for one decision, before the stores' own failures
/// are added (``OfflineAccessDecision/init(evaluation:mark:items:)`` adds them).
public struct OfflineEvaluation: Sendable, Hashable {
  /// Every reason a rule refused for.
  public let reasons: EligibilityReasons
  /// The time age was judged from: the latest effective time of the rules (the wall reading, the
  /// boot-clock floor when it proves more time passed, or the trusted time while a server anchor
  /// holds).
  public let effectiveNow: WallClockInstant
  /// The oldest item's `writtenAt` plus the max age (the last fresh instant by age); `nil` with
  /// no items or when not representable.
  public let deadline: WallClockInstant?
  /// Which protections were applied.
  public let protections: OfflineProtections
  /// The boot-clock floor's details, when the floor was checked.
  public let floorCheck: BootClockFloorCheck?
  /// What trusted time and the TPM contributed, when the record has trusted time or a TPM is
  /// configured.
  public var trustedTime: TrustedTimeVerdict? { trustedTimeStorage?.value }
  /// ``trustedTime``, out of line (most decisions have none; copies of the evaluation and of the
  /// decision that keeps it stay small).
  let trustedTimeStorage: OutOfLine<TrustedTimeVerdict>?

  init(
    reasons: EligibilityReasons, effectiveNow: WallClockInstant, deadline: WallClockInstant?,
    protections: OfflineProtections, floorCheck: BootClockFloorCheck?,
    trustedTime: OutOfLine<TrustedTimeVerdict>?
  ) {
    self.reasons = reasons
    self.effectiveNow = effectiveNow
    self.deadline = deadline
    self.protections = protections
    self.floorCheck = floorCheck
    self.trustedTimeStorage = trustedTime
  }
}
