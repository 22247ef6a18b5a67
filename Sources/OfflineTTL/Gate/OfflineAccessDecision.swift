/// The gate's answer to "may this cache be used offline now?": a value, never an error.
///
/// A store failure is a refusal that carries the typed error: the gate fails closed and keeps
/// the evidence (<doc:Rules#Fail-closed>). Every decision is built by one initializer,
/// ``init(evaluation:mark:items:)``, from the rules' combined verdict and what happened to the
/// mark and to the items.
public struct OfflineAccessDecision: Sendable, Hashable {
  /// `fresh` (use the cache), `expired` (ask for an online sign-in; the data is kept) or
  /// `unavailable` (nothing is cached).
  public let status: EligibilityStatus
  /// Every reason that applies; empty unless ``status`` is `expired`.
  public let reasons: EligibilityReasons
  /// The wall-clock time this decision was made at (read under the mark store's lock, or after
  /// the stored mark). The time that decided is ``effectiveNow``.
  public let now: WallClockInstant
  /// The time that decided, which age was judged from: ``now``, the boot-clock floor when it
  /// proves more time passed (see ``floorCheck``), or, while a server anchor holds, the trusted
  /// time (see ``trustedTime``). Print ages and "in ..." from it.
  public let effectiveNow: WallClockInstant
  /// For `fresh`, the last instant at which the cache is still fresh by age (oldest `writtenAt` +
  /// max age); `nil` otherwise or when not representable.
  public let deadline: WallClockInstant?
  /// The clock mark stored after this decision (`nil` when no readable mark exists).
  public let mark: WallClockInstant?
  /// The clock mark read before this decision's observation (`nil` when none was readable).
  public let previousMark: WallClockInstant?
  /// The mark record's generation (incremented by each online sign-in), when readable.
  public let generation: UInt64?
  /// The item count and the oldest and newest `writtenAt`; `nil` when the items could not be
  /// summarized (see ``cacheError``).
  public let items: ItemTimeSummary?
  /// The mark store's failure behind `mark_missing`, `mark_unreadable` or `mark_not_persisted`.
  public let markError: StoreError?
  /// The item store's failure behind `item_unreadable`.
  public let cacheError: StoreError?
  /// The boot-clock floor after this decision's observation (<doc:Rules#Boot-clock-floor>),
  /// when a record was read; the reader carries it forward to check its deadline against
  /// `max(wall, L)`.
  public let floor: BootClockFloor?
  /// The floor's verdict (the floor `L`, the tolerance, the effective time and which clock set
  /// it), when the policy uses the floor and it could be checked.
  public let floorCheck: BootClockFloorCheck?
  /// What the server anchor and the TPM contributed (the trusted time used, the wall clock's
  /// offset from it, which clock carried it, a TPM refusal); `nil` when the store has no trusted
  /// time and no TPM is configured.
  public let trustedTime: TrustedTimeVerdict?
  /// Which protections this decision applied, and which were off, unavailable or superseded.
  public let protections: OfflineProtections
  /// The sealed mark record this decision observed under the mark store's lock (its generation
  /// and store id), for the reader's sealed reads (``MarkBoundItemReading``); `nil` unless the
  /// record was observed and is sealed.
  let markBinding: MarkBinding?

  /// Builds a decision: the one place a decision is assembled.
  ///
  /// `unavailable` when the items were read and there are none (no reason, whatever the mark);
  /// otherwise the rules' reasons, plus the mark store's failure (``MarkOutcome/reason``) and
  /// the item store's: the sealing key's own reason for a key or seal problem
  /// (``EligibilityReasons/sealing(_:)``), else `item_unreadable`; `fresh` exactly when there is
  /// none.
  ///
  /// - Parameters:
  ///   - evaluation: The rules' combined verdict over the same inputs
  ///     (``OfflinePolicySet/evaluate(_:policy:)``).
  ///   - mark: What happened to the mark, with the clocks read for this decision.
  ///   - items: The items' summary, or the item store's failure.
  /// - Complexity: O(1).
  public init(
    evaluation: OfflineEvaluation, mark: MarkOutcome, items: Result<ItemTimeSummary, StoreError>
  ) {
    let summary = try? items.get()
    var reasons = evaluation.reasons.union(mark.reason)
    if case .failure(let error) = items {
      reasons.insert(EligibilityReasons.sealing(error.code) ?? .itemUnreadable)
    }
    let status: EligibilityStatus
    if let summary, summary.count == 0 {
      status = .unavailable
      reasons = []
    } else {
      status = reasons.isEmpty ? .fresh : .expired
    }
    self.status = status
    self.reasons = reasons
    self.now = mark.reading.wall
    self.effectiveNow = evaluation.effectiveNow
    self.deadline = status == .fresh ? evaluation.deadline : nil
    self.mark = mark.storedMark
    self.previousMark = mark.previousMark
    self.generation = mark.generation
    self.items = summary
    self.markError = mark.error
    if case .failure(let error) = items {
      self.cacheError = error
    } else {
      self.cacheError = nil
    }
    self.floor = mark.recordAfter?.floor
    self.floorCheck = evaluation.floorCheck
    self.protections = evaluation.protections
    self.trustedTime = evaluation.trustedTime
    if case .observed(let transition) = mark, let storeID = transition.sealedStoreID {
      self.markBinding = MarkBinding(generation: transition.current.generation, storeID: storeID)
    } else {
      self.markBinding = nil
    }
  }

  /// Whether the cache may be used offline.
  public var isFresh: Bool { status == .fresh }

  /// The time left before the cache expires by age, measured from ``effectiveNow``: `nil`
  /// unless fresh with a representable deadline.
  public var remaining: Duration? {
    deadline.map { effectiveNow.duration(to: $0) }
  }

  /// Whether the cache is fresh and stays fresh by age for at least `minimum` more, judged from
  /// ``effectiveNow`` (what Auth0's `hasValid(minTTL:)` answers): fresh with a deadline at or
  /// after `effectiveNow + minimum`. A fresh decision with no representable deadline is fresh
  /// for any duration. A rollback can still end freshness earlier; the reader rechecks.
  ///
  /// - Parameter minimum: How long the cache must stay fresh; zero or less asks only "fresh now".
  /// - Returns: `false` when not fresh, or when the deadline comes sooner.
  public func isFresh(forAtLeast minimum: Duration) -> Bool {
    guard isFresh else { return false }
    guard let remaining else { return true }
    return remaining >= minimum
  }
}
