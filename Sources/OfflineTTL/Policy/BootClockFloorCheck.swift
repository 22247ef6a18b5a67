/// The boot-clock floor's verdict on one decision: the layer that <doc:Rules#Boot-clock-floor> adds on top of the
/// eligibility rule, which it leaves unchanged.
///
/// Given the record *after* the observation (so its floor `L` has been carried forward along the
/// boot clock), the wall time and the policy, it finds the reasons the mark rule cannot see:
/// - `clock_behind_elapsed_time` when `wall < L − tolerance`: a rollback even when the wall clock
///   is still ahead of the mark (a clock held still, or set back by less than the time that
///   passed since the last observation);
/// - `boot_clock_inconsistent` when the floor is untrusted (the boot clock went backward within
///   one boot), until an online sign-in re-anchors it;
/// - `too_old` judged from ``effectiveNow`` = `max(wall, L)`, so a held clock still expires after
///   max age of real, boot-clock time.
///
/// The tolerance is a fixed part (``EligibilityPolicy/clockTolerance``, default 2 s) plus 500 ppm
/// of the boot-clock time since the last online sign-in (NTP slews the wall clock by at most
/// 500 ppm, so a correct clock is never refused, after a day or a month).
///
/// Pure: reads no clock and touches no storage.
public struct BootClockFloorCheck: Sendable, Hashable {
  /// Which clock set ``BootClockFloorCheck/effectiveNow``.
  public enum EffectiveClock: String, Sendable, Hashable, CustomStringConvertible {
    /// The wall clock was at or ahead of the floor (the usual case).
    case wall
    /// The floor was ahead of the wall clock: the boot clock proved more time passed.
    case floor

    /// `wall` or `floor`.
    public var description: String { rawValue }
  }

  /// The rate part of the tolerance, in parts per million of boot time since sign-in (the most
  /// NTP slews a clock: `ntpd(8)`, `adjtimex(2)`'s 500 ppm limit).
  public static let rateTolerancePartsPerMillion: UInt64 = 500

  /// Whether the floor was checked at all: `false` when the policy turns it off
  /// (``EligibilityPolicy/usesBootClockFloor``), and then no reason is added and
  /// ``effectiveNow`` is the wall time.
  public let isApplied: Bool
  /// The wall-clock time of this decision.
  public let wall: WallClockInstant
  /// `L`, the floor after this observation.
  public let floor: WallClockInstant
  /// Whether the floor was untrusted (then it does not set ``effectiveNow``).
  public let isFloorUntrusted: Bool
  /// The whole tolerance in nanoseconds (fixed + 500 ppm, rounded up, saturating); see
  /// ``tolerance(fixed:elapsedSinceSignIn:)``.
  public let toleranceNanoseconds: UInt64
  /// `max(wall, L)`, or `wall` when the check is off or the floor untrusted. Age and the
  /// offline reader's deadline are judged from it.
  public let effectiveNow: WallClockInstant
  /// Which clock set ``effectiveNow``.
  public let effectiveClock: EffectiveClock
  /// The reasons this layer adds: a subset of `clock_behind_elapsed_time`,
  /// `boot_clock_inconsistent` and `too_old`. Empty when the floor finds nothing wrong.
  public let reasons: EligibilityReasons

  /// The tolerance as a `Duration`.
  public var tolerance: Duration { .nanoseconds(Int64(clamping: toleranceNanoseconds)) }

  /// How far the wall clock is behind the floor (`L − wall`), zero when it is not behind.
  public var behindFloor: Duration {
    wall < floor ? wall.duration(to: floor) : .zero
  }

  /// Checks one decision.
  ///
  /// - Parameters:
  ///   - record: The mark record after this observation (``ClockMarkRecord/observing(_:)``).
  ///   - wall: The wall-clock time of this decision.
  ///   - items: The items' summary; with no items, `too_old` is never added.
  ///   - policy: Supplies the max age, the fixed tolerance and whether the floor is used.
  /// - Complexity: O(1); no heap allocation.
  public init(
    record: ClockMarkRecord, wall: WallClockInstant, items: ItemTimeSummary,
    policy: EligibilityPolicy
  ) {
    self.init(floor: record.floor, wall: wall, items: items, policy: policy)
  }

  /// ``init(record:wall:items:policy:)`` from the record's floor alone.
  init(
    floor: BootClockFloor, wall: WallClockInstant, items: ItemTimeSummary,
    policy: EligibilityPolicy
  ) {
    self.wall = wall
    self.floor = floor.lowerBound
    self.isFloorUntrusted = floor.isUntrusted
    self.toleranceNanoseconds = Self.tolerance(
      fixedNanoseconds: policy.clockToleranceNanoseconds,
      elapsedSinceSignIn: floor.elapsedSinceSignIn)
    guard policy.usesBootClockFloor else {
      self.isApplied = false
      self.effectiveNow = wall
      self.effectiveClock = .wall
      self.reasons = []
      return
    }
    self.isApplied = true
    var reasons: EligibilityReasons = []
    if floor.isUntrusted {
      reasons.insert(.bootClockInconsistent)
      self.effectiveNow = wall
      self.effectiveClock = .wall
    } else {
      if wall < floor.lowerBound {
        // L − wall is in 1...UInt64.max, so the wrapping subtraction's bit pattern is exact.
        let behind = UInt64(
          bitPattern: floor.lowerBound.nanosecondsSinceEpoch &- wall.nanosecondsSinceEpoch)
        if behind > toleranceNanoseconds { reasons.insert(.clockBehindElapsedTime) }
        self.effectiveNow = floor.lowerBound
        self.effectiveClock = .floor
      } else {
        self.effectiveNow = wall
        self.effectiveClock = .wall
      }
    }
    if let oldest = items.oldest, items.count > 0, effectiveNow >= oldest {
      let age = UInt64(
        bitPattern: effectiveNow.nanosecondsSinceEpoch &- oldest.nanosecondsSinceEpoch)
      if age > policy.maxAgeNanoseconds { reasons.insert(.tooOld) }
    }
    self.reasons = reasons
  }

  /// The floor's tolerance: `fixed + ⌈elapsedSinceSignIn × 500 / 10⁶⌉`, in nanoseconds.
  ///
  /// Computed on whole nanoseconds without overflow: each part is clamped to
  /// `0...UInt64.max` (negative durations count as zero), the rate part is
  /// `⌈elapsed / 2000⌉` (500 ppm = 1/2000) computed as a quotient plus one when a remainder is
  /// left, and the sum saturates at `UInt64.max`. The rate part is rounded **up**, the safe
  /// direction for the floor's promise that a clock slewed by at most 500 ppm is never refused:
  /// the rounding can only add at most 1 ns of leniency, never take any away.
  ///
  /// - Parameters:
  ///   - fixed: The fixed part (``EligibilityPolicy/clockTolerance``).
  ///   - elapsedSinceSignIn: Boot-clock time since the last online sign-in.
  /// - Returns: The tolerance in nanoseconds.
  public static func tolerance(fixed: Duration, elapsedSinceSignIn: Duration) -> UInt64 {
    tolerance(
      fixedNanoseconds: fixed.saturatingNonnegativeNanoseconds,
      elapsedSinceSignIn: elapsedSinceSignIn)
  }

  /// ``tolerance(fixed:elapsedSinceSignIn:)`` with the fixed part already in nanoseconds
  /// (``EligibilityPolicy`` converts it once).
  static func tolerance(fixedNanoseconds fixedPart: UInt64, elapsedSinceSignIn: Duration) -> UInt64
  {
    let elapsed = elapsedSinceSignIn.saturatingNonnegativeNanoseconds
    let divisor = 1_000_000 / rateTolerancePartsPerMillion
    let (quotient, remainder) = elapsed.quotientAndRemainder(dividingBy: divisor)
    let ratePart = quotient + (remainder == 0 ? 0 : 1)
    let (sum, overflow) = fixedPart.addingReportingOverflow(ratePart)
    return overflow ? .max : sum
  }

  /// The time an opened offline reader judges its deadline by: `max(wall, L)` (<doc:Rules#Recheck-at-open-and-at-each-read>
  /// and 9), so a held-back clock cannot keep a reader alive.
  ///
  /// - Parameters:
  ///   - wall: The wall clock now.
  ///   - floor: The floor carried forward to now (``BootClockFloor/advanced(to:)``), or `nil`
  ///     when the floor is off.
  /// - Returns: `max(wall, floor.lowerBound)`; `wall` when `floor` is `nil` or untrusted.
  public static func effectiveNow(wall: WallClockInstant, floor: BootClockFloor?)
    -> WallClockInstant
  {
    guard let floor, !floor.isUntrusted else { return wall }
    return Swift.max(wall, floor.lowerBound)
  }

  /// Folds this check into the eligibility rule's evaluation: the reasons are united, and `fresh` becomes
  /// `expired` when this layer found any. `unavailable` stays `unavailable` (nothing cached).
  ///
  /// - Parameter evaluation: The eligibility rule's result for the same items, wall time and mark.
  /// - Returns: The combined evaluation; its ``EligibilityEvaluation/deadline`` is kept only when
  ///   the combined status is still `fresh`.
  public func applied(to evaluation: EligibilityEvaluation) -> EligibilityEvaluation {
    guard evaluation.status != .unavailable, !reasons.isEmpty else { return evaluation }
    return EligibilityEvaluation(
      status: .expired, reasons: evaluation.reasons.union(reasons), now: evaluation.now,
      previousMark: evaluation.previousMark, updatedMark: evaluation.updatedMark,
      items: evaluation.items, maxAge: evaluation.maxAge, deadline: nil)
  }
}
