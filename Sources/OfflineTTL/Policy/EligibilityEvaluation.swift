/// The result of applying the pure policy once: a value, never an error.
///
/// It carries the values each reason was judged on, so a caller can say *why* without
/// recomputing anything.
public struct EligibilityEvaluation: Sendable, Hashable {
  /// `fresh`, `expired` or `unavailable`.
  public let status: EligibilityStatus
  /// Every reason that applies; empty unless ``status`` is `expired`.
  public let reasons: EligibilityReasons
  /// The wall-clock time the decision was made at.
  public let now: WallClockInstant
  /// The mark before this decision, `nil` on first use.
  public let previousMark: WallClockInstant?
  /// The mark to persist: `max(previousMark ?? now, now)`; unchanged (possibly `nil`) when there
  /// are no items.
  public let updatedMark: WallClockInstant?
  /// The item count and the oldest and newest `writtenAt`.
  public let items: ItemTimeSummary
  /// The max age the decision used.
  public let maxAge: Duration
  /// For a fresh result, the last instant at which the cache is still fresh by age
  /// (oldest + max age); `nil` when expired, unavailable, or not representable.
  public let deadline: WallClockInstant?

  /// `now − oldest` (negative for an item from the future), or `nil` with no items.
  public var age: Duration? { items.oldest.map { $0.duration(to: now) } }
}
