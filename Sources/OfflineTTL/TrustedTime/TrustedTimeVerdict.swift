/// What trusted time and the TPM contributed to one decision: the wall clock and the trusted
/// time (while a server anchor holds), which clock carried it, whether the TPM's power-loss
/// allowance applied, and a TPM refusal. Part of ``OfflineAccessDecision``.
public struct TrustedTimeVerdict: Sendable, Hashable {
  /// The wall clock at the decision.
  public let wall: WallClockInstant
  /// The trusted time the decision used, while a server anchor holds; `nil` otherwise (the wall
  /// clock, the mark rule and the floor decided).
  public let trustedNow: WallClockInstant?
  /// The server anchor, while it holds.
  public let anchor: TrustedTimeAnchor?
  /// The clock that carried trusted time (or the floor) over this observation, if any.
  public let carriedBy: TrustedTimeStep.CarryingClock?
  /// Whether the TPM read unsafe after a reset since the last record, so the power-loss
  /// allowance (``TPMClockStep/nvUpdateInterval``) was added to the elapsed time.
  public let appliedPowerLossAllowance: Bool
  /// The TPM reading of this decision, when a TPM is configured and answered.
  public let tpm: TPMClockReading?
  /// The TPM's refusal (`tpm_unavailable`, `tpm_changed`), if any.
  public let tpmError: TPMClockError?

  /// Creates a verdict.
  public init(
    wall: WallClockInstant, trustedNow: WallClockInstant?, anchor: TrustedTimeAnchor?,
    carriedBy: TrustedTimeStep.CarryingClock?, appliedPowerLossAllowance: Bool,
    tpm: TPMClockReading?, tpmError: TPMClockError?
  ) {
    self.wall = wall
    self.trustedNow = trustedNow
    self.anchor = anchor
    self.carriedBy = carriedBy
    self.appliedPowerLossAllowance = appliedPowerLossAllowance
    self.tpm = tpm
    self.tpmError = tpmError
  }

  /// The verdict for one observation (`nil` when the store has no trusted time and no TPM is
  /// configured: the decision is exactly as without this feature).
  ///
  /// - Parameter transition: The mark store's transition (its observation carries the TPM's
  ///   reading or failure).
  init?(transition: ClockMarkTransition) {
    self.init(
      before: transition.previous, observation: transition.observation,
      after: transition.current)
  }

  /// The verdict for one observation of a record (`nil` when the record has no trusted time and
  /// no TPM is configured).
  ///
  /// - Parameters:
  ///   - before: The record before the observation.
  ///   - observation: The clocks (with the TPM's reading or failure).
  ///   - after: The record after it (``ClockMarkRecord/observing(_:)``).
  /// - Complexity: O(1).
  public init?(before: ClockMarkRecord, observation: ClockObservation, after: ClockMarkRecord) {
    guard before.hasTrustedTime || observation.hasTPMReading || observation.hasTPMError
    else { return nil }
    let tpmError = observation.tpmError
    let previous =
      before.trustedTime
      ?? TrustedTime(
        anchor: nil, lowerBound: before.floor.lowerBound, elapsedSinceAnchor: .zero,
        lastBoot: observation.boot, lastTPM: observation.tpm)
    let step = try? previous.advanced(boot: observation.boot, tpm: observation.tpm)
    let changed = before.tpmChange(for: observation)
    let current = after.trustedTime
    self.init(
      wall: observation.wall, trustedNow: changed == nil ? current?.effectiveNow : nil,
      anchor: changed == nil ? current?.anchor : nil, carriedBy: step?.carriedBy,
      appliedPowerLossAllowance: step?.appliedPowerLossAllowance ?? false,
      tpm: observation.tpm, tpmError: tpmError ?? changed)
  }

  /// `wall − trustedNow`: how far the wall clock is ahead of trusted time (negative when
  /// behind); `nil` without an anchor.
  public var wallOffset: Duration? {
    trustedNow.map { $0.duration(to: wall) }
  }

  /// The eligibility reason for ``tpmError``, or none.
  public var reasons: EligibilityReasons {
    switch tpmError?.code {
    case .some(.tpmChanged): .tpmChanged
    case .some: .tpmUnavailable
    case nil: []
    }
  }
}
