/// The eligibility rule: how old a cache may be, and the options that govern how the gate
/// applies the rule.
///
/// The pure part, ``evaluate(_:now:mark:)``, is the eligibility rule exactly (<doc:Rules#Eligibility-rule>): for
/// items `w`, time `now`, mark `m` (absent on first use) and max age `A`,
/// - no items → `unavailable`, mark unchanged;
/// - otherwise `previous = m ?? now`, `updated = max(previous, now)`, and `fresh` iff
///   `now >= previous`, `max(w) <= now` and `now − min(w) <= A` (age == A is fresh).
///
/// Arithmetic never traps or wraps for any representable input (<doc:Rules#Typed-time>).
public struct EligibilityPolicy: Sendable, Hashable {
  /// The TTL: how long after its oldest item a cache may be used offline. Never negative.
  public let maxAge: Duration
  /// ``maxAge`` in whole nanoseconds, saturated at `UInt64.max` (about 584 years); ages are whole
  /// nanoseconds, so truncating a sub-nanosecond part changes no decision.
  public let maxAgeNanoseconds: UInt64
  /// Whether the gate may create the first clock mark when items exist but no mark does (an app
  /// migrating from a version without marks). Off by default: a missing mark is `expired`
  /// with reason `mark_missing` (<doc:Rules#Fail-closed>).
  public var trustOnFirstUse: Bool
  /// Whether the gate checks the boot-clock floor (<doc:Rules#Boot-clock-floor>; ``BootClockFloorCheck``): a
  /// wall clock more than the tolerance behind the floor is refused
  /// (`clock_behind_elapsed_time`) and age is judged from `max(wall, floor)`. On by default.
  /// Off, the clock mark alone decides; the floor is still carried forward in the record, so
  /// turning it back on loses no elapsed time.
  ///
  /// With the floor on, a decision that cannot read the boot clock (or whose last sign-in
  /// could not) is refused with `boot_clock_unavailable`: on a platform or in a process without
  /// a boot clock, turn the floor off to run on the mark rule alone.
  public var usesBootClockFloor: Bool
  /// The fixed part of the boot-clock floor's tolerance; 500 ppm of the boot time since the last
  /// sign-in is added to it. Default 2 s. Never negative.
  public let clockTolerance: Duration
  /// ``clockTolerance`` in whole nanoseconds, saturated at `UInt64.max` (converted once, not at
  /// each decision).
  let clockToleranceNanoseconds: UInt64
  /// The smallest rise of the mark that is written to storage. An observation that would raise
  /// the stored mark by less reads and decides but does not write. Default 1 s; zero writes every
  /// observation. Never negative.
  public let markResolution: Duration

  /// Creates a policy.
  ///
  /// - Parameters:
  ///   - maxAge: The TTL, nonnegative (`.seconds(7 * 86_400)` for a week).
  ///   - trustOnFirstUse: See ``trustOnFirstUse``; default `false`.
  ///   - usesBootClockFloor: See ``usesBootClockFloor``; default `true`.
  ///   - clockTolerance: See ``clockTolerance``; default 2 s.
  ///   - markResolution: See ``markResolution``; default 1 s.
  /// - Throws: ``InvalidValueError`` with code `negativeMaxAge` for a negative max age, or
  ///   `outOfRange` for a negative tolerance or resolution.
  public init(
    maxAge: Duration,
    trustOnFirstUse: Bool = false,
    usesBootClockFloor: Bool = true,
    clockTolerance: Duration = .seconds(2),
    markResolution: Duration = .seconds(1)
  ) throws(InvalidValueError) {
    guard maxAge >= .zero else {
      throw InvalidValueError(
        .negativeMaxAge, "max age must be zero or more, got \(maxAge)")
    }
    guard clockTolerance >= .zero else {
      throw InvalidValueError(
        .outOfRange, "clock tolerance must be zero or more, got \(clockTolerance)")
    }
    guard markResolution >= .zero else {
      throw InvalidValueError(
        .outOfRange, "mark resolution must be zero or more, got \(markResolution)")
    }
    self.maxAge = maxAge
    self.maxAgeNanoseconds = maxAge.saturatingNonnegativeNanoseconds
    self.trustOnFirstUse = trustOnFirstUse
    self.usesBootClockFloor = usesBootClockFloor
    self.clockTolerance = clockTolerance
    self.clockToleranceNanoseconds = clockTolerance.saturatingNonnegativeNanoseconds
    self.markResolution = markResolution
  }
}

extension EligibilityPolicy {
  /// Applies the eligibility rule to a summary of the items (<doc:Rules#Eligibility-rule>). Pure: reads no clock and
  /// touches no storage.
  ///
  /// - Parameters:
  ///   - items: The count and the oldest and newest `writtenAt`.
  ///   - now: The wall-clock time of this decision.
  ///   - mark: The stored clock mark, or `nil` on first use.
  /// - Returns: The status, every reason that applies, the updated mark (`max(mark ?? now, now)`,
  ///   or `mark` unchanged when there are no items) and, when fresh, the deadline.
  /// - Complexity: O(1); no heap allocation.
  public func evaluate(_ items: ItemTimeSummary, now: WallClockInstant, mark: WallClockInstant?)
    -> EligibilityEvaluation
  {
    guard let oldest = items.oldest, items.count > 0, items.newest != nil else {
      return EligibilityEvaluation(
        status: .unavailable, reasons: [], now: now, previousMark: mark, updatedMark: mark,
        items: .empty, maxAge: maxAge, deadline: nil)
    }
    let reasons = reasons(items, now: now, mark: mark)
    let status: EligibilityStatus = reasons.isEmpty ? .fresh : .expired
    return EligibilityEvaluation(
      status: status, reasons: reasons, now: now, previousMark: mark,
      updatedMark: Swift.max(mark ?? now, now), items: items, maxAge: maxAge,
      deadline: status == .fresh ? deadline(oldest: oldest) : nil)
  }

  /// The reasons of ``evaluate(_:now:mark:)`` alone (empty for no items), without building the
  /// evaluation.
  ///
  /// - Complexity: O(1); no heap allocation.
  func reasons(_ items: ItemTimeSummary, now: WallClockInstant, mark: WallClockInstant?)
    -> EligibilityReasons
  {
    guard let oldest = items.oldest, let newest = items.newest, items.count > 0 else { return [] }
    var reasons: EligibilityReasons = []
    if now < (mark ?? now) { reasons.insert(.clockBehindMark) }
    if newest > now { reasons.insert(.itemFromFuture) }
    if now >= oldest {
      // now − oldest is in 0...UInt64.max, so the wrapping subtraction's bit pattern is exact.
      let age = UInt64(
        bitPattern: now.nanosecondsSinceEpoch &- oldest.nanosecondsSinceEpoch)
      if age > maxAgeNanoseconds { reasons.insert(.tooOld) }
    }
    return reasons
  }

  /// Applies the eligibility rule to the items' times in one pass.
  ///
  /// - Parameters:
  ///   - writtenAt: Each item's `writtenAt`, in any order.
  ///   - now: The wall-clock time of this decision.
  ///   - mark: The stored clock mark, or `nil` on first use.
  /// - Returns: As ``evaluate(_:now:mark:)``.
  /// - Complexity: O(n) time, O(1) extra memory, no heap allocation.
  @inlinable
  public func evaluate<S: Sequence>(
    writtenAt: S, now: WallClockInstant, mark: WallClockInstant?
  ) -> EligibilityEvaluation where S.Element == WallClockInstant {
    evaluate(ItemTimeSummary(writtenAt: writtenAt), now: now, mark: mark)
  }

  /// `oldest + maxAge`, or `nil` when that is past ``WallClockInstant/max``.
  ///
  /// - Parameter oldest: The oldest item's `writtenAt`.
  /// - Returns: The last instant at which the cache is still fresh by age.
  public func deadline(oldest: WallClockInstant) -> WallClockInstant? {
    // Int64.max − oldest is in 0...UInt64.max: room left above `oldest`.
    let room = UInt64(bitPattern: Int64.max &- oldest.nanosecondsSinceEpoch)
    guard maxAgeNanoseconds <= room else { return nil }
    // maxAgeNanoseconds saturates at UInt64.max; a max age of 2^64 ns or more ends later than
    // any instant (room is at most UInt64.max).
    if maxAgeNanoseconds == .max, maxAge >= .nanoseconds(Int64.max) * 2 + .nanoseconds(2) {
      return nil
    }
    return WallClockInstant(
      nanosecondsSinceEpoch: oldest.nanosecondsSinceEpoch &+ Int64(bitPattern: maxAgeNanoseconds))
  }
}
