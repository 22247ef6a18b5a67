/// The time a TPM clock proves passed between a recorded reading and a reading now, or why the
/// two cannot belong to the same TPM (`tpm_changed`). Pure.
///
/// The rules, with `R` the recorded reading and `N` the reading now:
/// - Another identity → `tpm_changed` (cleared or replaced).
/// - `N.resetCount < R.resetCount` → `tpm_changed` (only `TPM2_Clear` lowers it).
/// - Same `resetCount` (no power cycle between): `N.restartCount < R.restartCount` or
///   `N.clock < R.clock` → `tpm_changed` (within one power cycle the clock never goes back).
///   Elapsed = `N.clock − R.clock`.
/// - Higher `resetCount` (the TPM was reset, i.e. the machine rebooted or lost power):
///   elapsed = `N.clock − R.clock`, and when `N` is not safe (the TPM lost power without an
///   orderly shutdown) the **power-loss allowance** applies: the clock may have fallen back to
///   its last NV save, at most ``nvUpdateInterval`` (2²² ms ≈ 69.9 min) earlier, so
///   - a clock behind `R` by at most that interval is accepted (elapsed 0 before the allowance),
///     and further behind is `tpm_changed`;
///   - the elapsed time is *increased* by the whole interval, so that a device that loses power
///     again and again (each time before the TPM saves its clock) cannot stop time. The cost is
///     that an honest power loss ages the cache by up to 69.9 min more than the real time.
///     Several power losses with no check in between are counted once.
///
/// The TPM's clock runs while the TPM is powered; it does not count time the machine is off.
public struct TPMClockStep: Sendable, Hashable {
  /// The most a TPM's clock may fall back after a power loss: its NV update interval, 2²² ms
  /// (4,194.304 s ≈ 69.9 min; the TCG reference implementation's `NV_CLOCK_UPDATE_INTERVAL`
  /// of 22, and the longest interval the TPM 2.0 specification allows between NV saves of
  /// `Clock`).
  public static let nvUpdateInterval: Duration = .milliseconds(1 << 22)

  /// TPM time counted as passed, allowance included (never negative): what ages a cache.
  public let elapsed: Duration
  /// TPM time proved to have passed, without the power-loss allowance (never negative, at most
  /// ``elapsed``): a lower bound on real time, what carries the boot-clock floor. After a power
  /// loss it undercounts by up to ``nvUpdateInterval``; a floor carried by ``elapsed`` instead
  /// would run up to that much ahead of real time and refuse a correct wall clock.
  public var provedElapsed: Duration {
    guard appliedPowerLossAllowance else { return elapsed }
    let remainder = elapsed - Self.nvUpdateInterval
    return remainder > .zero ? remainder : .zero
  }
  /// Whether the power-loss allowance was added (the reading now is not safe and the TPM was
  /// reset since the recorded reading).
  public let appliedPowerLossAllowance: Bool
  /// Whether the TPM was reset (rebooted or power-cycled) since the recorded reading.
  public let crossedReset: Bool

  /// Compares two readings.
  ///
  /// - Parameters:
  ///   - recorded: The reading stored with the record.
  ///   - now: The reading now.
  /// - Throws: ``TPMClockError`` with code `tpmChanged` when `now` cannot come from the same TPM
  ///   after `recorded` (see the type's rules).
  public init(from recorded: TPMClockReading, to now: TPMClockReading) throws(TPMClockError) {
    guard now.identity == recorded.identity else {
      throw TPMClockError(
        code: .tpmChanged,
        reason: "the TPM's identity is \(now.identity), the record was written with"
          + " \(recorded.identity) (the TPM was cleared or replaced)")
    }
    guard now.resetCount >= recorded.resetCount else {
      throw TPMClockError(
        code: .tpmChanged,
        reason: "the TPM's reset count went back from \(recorded.resetCount) to \(now.resetCount)"
          + " (the TPM was cleared)")
    }
    let ahead = now.clockMilliseconds >= recorded.clockMilliseconds
    let difference =
      ahead
      ? now.clockMilliseconds - recorded.clockMilliseconds
      : recorded.clockMilliseconds - now.clockMilliseconds
    if now.resetCount == recorded.resetCount {
      guard now.restartCount >= recorded.restartCount, ahead else {
        throw TPMClockError(
          code: .tpmChanged,
          reason: "the TPM's clock or restart count went back within one power cycle"
            + " (clock \(recorded.clockMilliseconds) → \(now.clockMilliseconds) ms, restarts"
            + " \(recorded.restartCount) → \(now.restartCount))")
      }
      self.elapsed = .milliseconds(Int64(clamping: difference))
      self.appliedPowerLossAllowance = false
      self.crossedReset = false
      return
    }
    crossedReset = true
    let allowanceMilliseconds = UInt64(1) << 22
    if now.isSafe {
      guard ahead else {
        throw TPMClockError(
          code: .tpmChanged,
          reason: "the TPM's clock went back by \(difference) ms across a reset although the TPM"
            + " reports it safe")
      }
      self.elapsed = .milliseconds(Int64(clamping: difference))
      self.appliedPowerLossAllowance = false
    } else {
      guard ahead || difference <= allowanceMilliseconds else {
        throw TPMClockError(
          code: .tpmChanged,
          reason:
            "the TPM's clock went back by \(difference) ms, more than the \(allowanceMilliseconds)"
            + " ms a power loss can explain")
      }
      let base = ahead ? difference : 0
      let (sum, overflow) = base.addingReportingOverflow(allowanceMilliseconds)
      self.elapsed = .milliseconds(Int64(clamping: overflow ? .max : sum))
      self.appliedPowerLossAllowance = true
    }
  }
}
