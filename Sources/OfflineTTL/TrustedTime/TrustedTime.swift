/// Trusted time: a server anchor carried forward by clocks nobody can set, stored with the mark.
///
/// An online sign-in that passes a server time anchors it (``anchored(_:)``): the lower bound
/// `T = serverTime − uncertainty`. Each observation carries `T` forward by the time the clocks
/// prove passed since the last observation (``advanced(boot:tpm:)``): the boot clock within a
/// boot, the TPM clock (when configured) within a boot and across reboots; when both can tell,
/// the larger (both are lower bounds on real time). The effective time of a decision is
///
///     trusted = T − allowance,   allowance = 2 s + ⌈500 ppm × elapsed since the anchor⌉
///
/// that is, server time + elapsed − uncertainty − drift allowance, the same 2 s + 500 ppm as the
/// boot-clock floor's tolerance (``BootClockFloorCheck/tolerance(fixed:elapsedSinceSignIn:)``):
/// crystal clocks drift far less than 500 ppm. When the TPM lost power without an orderly
/// shutdown, the step adds ``TPMClockStep/nvUpdateInterval`` (see ``TPMClockStep``).
///
/// When no clock can carry `T` (another boot and no TPM, or a boot clock that went backward with
/// no TPM), the anchor stops holding: ``anchor`` becomes `nil` and decisions fall back to the
/// mark rule and the floor; the caller persists the last trusted time as the floor, so a reboot
/// never lengthens the offline window. Pure: reads no clock and touches no storage; all
/// arithmetic saturates.
public struct TrustedTime: Sendable, Hashable {
  /// The anchor while it holds; `nil` when there is none or it stopped holding.
  public var anchor: TrustedTimeAnchor?
  /// `T`: server time − uncertainty + time proved to have passed since.
  public var lowerBound: WallClockInstant
  /// Time proved to have passed since the anchor (drives the 500 ppm part of the allowance).
  public var elapsedSinceAnchor: Duration
  /// The boot clock at the last carry.
  public var lastBoot: BootClockReading?
  /// The TPM clock at the last carry.
  public var lastTPM: TPMClockReading?

  /// Creates a value (decoders; prefer ``anchored(_:)``).
  public init(
    anchor: TrustedTimeAnchor?, lowerBound: WallClockInstant, elapsedSinceAnchor: Duration,
    lastBoot: BootClockReading?, lastTPM: TPMClockReading?
  ) {
    self.anchor = anchor
    self.lowerBound = lowerBound
    self.elapsedSinceAnchor = elapsedSinceAnchor
    self.lastBoot = lastBoot
    self.lastTPM = lastTPM
  }

  /// The fixed part of the drift allowance: 2 s.
  public static let fixedAllowance: Duration = .seconds(2)

  /// Trusted time starting at an anchor: `T = serverTime − uncertainty`.
  ///
  /// - Parameter anchor: The server time and the clocks at its receipt.
  /// - Returns: The state to store with the mark.
  public static func anchored(_ anchor: TrustedTimeAnchor) -> TrustedTime {
    TrustedTime(
      anchor: anchor,
      lowerBound: anchor.serverTime.saturatingAdvanced(by: .zero - anchor.uncertainty),
      elapsedSinceAnchor: .zero, lastBoot: anchor.boot, lastTPM: anchor.tpm)
  }

  /// Whether an anchor holds.
  public var isAnchored: Bool { anchor != nil }

  /// The drift allowance now: 2 s + ⌈500 ppm × ``elapsedSinceAnchor``⌉.
  public var allowance: Duration {
    .nanoseconds(
      Int64(
        clamping: BootClockFloorCheck.tolerance(
          fixed: Self.fixedAllowance, elapsedSinceSignIn: elapsedSinceAnchor)))
  }

  /// The effective time of a decision while the anchor holds: `T − allowance`; `nil` without
  /// an anchor.
  public var effectiveNow: WallClockInstant? {
    guard anchor != nil else { return nil }
    return lowerBound.saturatingAdvanced(by: .zero - allowance)
  }

  /// Carries trusted time forward to the clocks now.
  ///
  /// - Parameters:
  ///   - boot: The boot clock now, or `nil` without one.
  ///   - tpm: The TPM clock now, or `nil` when no TPM is configured.
  /// - Returns: The step: the state to store and what carried it.
  /// - Throws: ``TPMClockError`` (`tpmChanged`) when the TPM now cannot be the one of the last
  ///   carry (see ``TPMClockStep``): the caller refuses until an online sign-in re-anchors.
  public func advanced(boot: BootClockReading?, tpm: TPMClockReading?) throws(TPMClockError)
    -> TrustedTimeStep
  {
    var bootElapsed: Duration?
    if let boot, let lastBoot, boot.bootID != .none, boot.bootID == lastBoot.bootID,
      boot.sinceBoot >= lastBoot.sinceBoot
    {
      bootElapsed = boot.sinceBoot - lastBoot.sinceBoot
    }
    var tpmStep: TPMClockStep?
    if let tpm, let lastTPM {
      tpmStep = try TPMClockStep(from: lastTPM, to: tpm)
    }
    var next = self
    next.lastBoot = boot ?? lastBoot
    next.lastTPM = tpm ?? lastTPM
    let carriedBy: TrustedTimeStep.CarryingClock?
    let elapsed: Duration
    switch (bootElapsed, tpmStep?.elapsed) {
    case (let byBoot?, let byTPM?):
      carriedBy = byTPM > byBoot ? .tpmClock : .bootClock
      elapsed = Swift.max(byBoot, byTPM)
    case (let byBoot?, nil):
      carriedBy = .bootClock
      elapsed = byBoot
    case (nil, let byTPM?):
      carriedBy = .tpmClock
      elapsed = byTPM
    case (nil, nil):
      carriedBy = nil
      elapsed = .zero
    }
    if anchor != nil, carriedBy == nil {
      next.anchor = nil
    }
    next.lowerBound = lowerBound.saturatingAdvanced(by: elapsed)
    next.elapsedSinceAnchor = Self.saturatingSum(elapsedSinceAnchor, elapsed)
    return TrustedTimeStep(
      previous: self, next: next, carriedBy: carriedBy, elapsed: elapsed, tpmStep: tpmStep)
  }

  private static func saturatingSum(_ a: Duration, _ b: Duration) -> Duration {
    let (sum, overflow) = a.clampedNanoseconds.addingReportingOverflow(b.clampedNanoseconds)
    return .nanoseconds(overflow ? .max : sum)
  }
}

/// One carry of trusted time: before, after, and which clock proved the elapsed time.
public struct TrustedTimeStep: Sendable, Hashable {
  /// The clock that carried trusted time over this step.
  public enum CarryingClock: String, Sendable, Hashable, CustomStringConvertible {
    /// The boot clock (same boot).
    case bootClock = "boot_clock"
    /// The TPM 2.0 clock.
    case tpmClock = "tpm_clock"

    /// `boot_clock` or `tpm_clock`.
    public var description: String { rawValue }
  }

  /// The state before.
  public let previous: TrustedTime
  /// The state after; store it.
  public let next: TrustedTime
  /// Which clock proved the elapsed time, or `nil` when none could (the anchor, if any, stopped
  /// holding).
  public let carriedBy: CarryingClock?
  /// Time proved to have passed over this step (zero when `carriedBy` is `nil`).
  public let elapsed: Duration
  /// The TPM's comparison, when a TPM reading was recorded and one was taken now.
  public let tpmStep: TPMClockStep?

  /// Whether the anchor held before this step and stopped holding at it.
  public var brokeAnchor: Bool { previous.anchor != nil && next.anchor == nil }

  /// Whether this step added the TPM's power-loss allowance.
  public var appliedPowerLossAllowance: Bool { tpmStep?.appliedPowerLossAllowance ?? false }
}
