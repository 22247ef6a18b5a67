/// The gate's answer to "may this cache be used offline now?": a value, never an error.
///
/// A store failure is a refusal that carries the typed error: the gate fails closed and keeps
/// the evidence (<doc:Rules#Fail-closed>). Every decision is assembled in one place, from the
/// rules' combined verdict and what happened to the mark and to the items: by
/// ``init(evaluation:mark:items:)`` for a verdict already made, or by ``init(policy:mark:items:)``,
/// which runs the rules itself (the gate's way).
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
  public var markError: StoreError? { markErrorStorage?.value }
  /// The item store's failure behind `item_unreadable` (or a sealing reason). `nil` when the
  /// item store failed only because the clock mark it is bound to could not be read (a sealed
  /// store): that failure is ``markError``'s, reported once. A key or seal problem
  /// (``EligibilityReasons/sealing(_:)``) is both stores' and is on both.
  public var cacheError: StoreError? { cacheErrorStorage?.value }
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
  public var trustedTime: TrustedTimeVerdict? { trustedTimeStorage?.value }
  /// Which protections this decision applied, and which were off, unavailable or superseded.
  public let protections: OfflineProtections
  /// The sealed mark record this decision observed under the mark store's lock (its generation
  /// and store id), for the reader's sealed reads (``MarkBoundItemReading``); `nil` unless the
  /// record was observed and is sealed.
  let markBinding: MarkBinding?
  // ``markError``, ``cacheError`` and ``trustedTime``, out of line: most decisions have none, and
  // a decision is copied as it is returned, so it stays small (about half its inline size).
  private let markErrorStorage: OutOfLine<StoreError>?
  private let cacheErrorStorage: OutOfLine<StoreError>?
  private let trustedTimeStorage: OutOfLine<TrustedTimeVerdict>?

  /// Builds a decision: the one place a decision is assembled.
  ///
  /// `unavailable` when the items were read and there are none (no reason, whatever the mark);
  /// otherwise the rules' reasons, plus the mark store's failure (``MarkOutcome/reason``) and
  /// the item store's: the sealing key's own reason for a key or seal problem
  /// (``EligibilityReasons/sealing(_:)``), else `item_unreadable` (none when the item store's
  /// failure is the mark store's own, met through the mark a sealed index is bound to);
  /// `fresh` exactly when there is none.
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
    let (summary, cacheError) = Self.split(items)
    self.init(
      evaluation: evaluation, markParts: MarkParts(mark), now: mark.reading.wall,
      previousMark: mark.previousMark, floor: mark.recordAfter?.floor, items: summary,
      cacheError: cacheError)
  }

  /// The items' summary and the item store's failure, from one of them.
  private static func split(_ items: Result<ItemTimeSummary, StoreError>) -> (
    ItemTimeSummary?, StoreError?
  ) {
    switch items {
    case .success(let summary): (summary, nil)
    case .failure(let error): (nil, error)
    }
  }

  /// Builds the decision for `mark` and `items` under `policy`: the rules
  /// (``OfflinePolicySet/evaluate(_:policy:)``) over the inputs of `mark` and `items`, then
  /// ``init(evaluation:mark:items:)``'s assembly. The same decision as
  /// `OfflineAccessDecision(evaluation: OfflinePolicySet().evaluate(inputs, policy: policy),
  /// mark: mark, items: items)` with the inputs read from `mark` (its ``MarkOutcome/reading``,
  /// ``MarkOutcome/previousMark``, ``MarkOutcome/recordAfter`` and
  /// ``MarkOutcome/recordBefore``), but each read once.
  ///
  /// - Parameters:
  ///   - policy: Max age and options.
  ///   - mark: What happened to the mark, with the clocks read for this decision.
  ///   - items: The items' summary, or the item store's failure.
  /// - Complexity: O(1); no heap allocation unless the store has trusted time, a TPM is
  ///   configured, or a store failed.
  public init(
    policy: EligibilityPolicy, mark: MarkOutcome, items: Result<ItemTimeSummary, StoreError>
  ) {
    let inputs: OfflineDecisionInputs
    let (summary, cacheError) = Self.split(items)
    switch mark {
    case .observed(let transition):
      self.init(policy: policy, transition: transition, items: summary, cacheError: cacheError)
      return
    case .createdFirst(let record, let reading):
      inputs = OfflineDecisionInputs(
        items: summary, reading: reading, previousMark: nil, record: record, recordBefore: nil)
    case .notObserved(let record, let reading), .failed(_, let record, let reading):
      inputs = OfflineDecisionInputs(
        items: summary, reading: reading, previousMark: record?.mark,
        record: record?.observing(reading), recordBefore: record)
    }
    self.init(
      evaluation: OfflinePolicySet().evaluate(inputs, policy: policy),
      markParts: MarkParts(mark), now: inputs.reading.wall, previousMark: inputs.previousMark,
      floor: inputs.record?.floor, items: summary, cacheError: cacheError)
  }

  /// ``init(policy:mark:items:)`` for ``MarkOutcome/observed(_:)`` of `transition`, straight
  /// from the transition (the gate's repeated check: no outcome is built or copied).
  ///
  /// - Parameters:
  ///   - policy: Max age and options.
  ///   - transition: The mark store's observation.
  ///   - items: The items' summary, `nil` when `cacheError` says why there is none.
  ///   - cacheError: The item store's failure, or `nil`.
  init(
    policy: EligibilityPolicy, transition: ClockMarkTransition, items: ItemTimeSummary?,
    cacheError: StoreError? = nil
  ) {
    let inputs = OfflineDecisionInputs(
      items: items, reading: transition.observation, previousMark: transition.previous.mark,
      record: transition.current, recordBefore: transition.previous)
    self.init(
      evaluation: OfflinePolicySet().evaluate(inputs, policy: policy),
      markParts: MarkParts(transition), now: transition.observation.wall,
      previousMark: transition.previous.mark, floor: transition.current.floor, items: items,
      cacheError: cacheError)
  }

  /// What a decision keeps of a ``MarkOutcome`` besides the rules' inputs, read in one pass.
  private struct MarkParts {
    var storedMark: WallClockInstant?
    var generation: UInt64?
    var error: StoreError?
    var reason: EligibilityReasons
    var binding: MarkBinding?

    /// The parts of ``MarkOutcome/observed(_:)`` of `transition`.
    init(_ transition: ClockMarkTransition) {
      storedMark = transition.storedMark
      generation = transition.current.generation
      error = nil
      reason = []
      binding = transition.sealedStoreID.map {
        MarkBinding(
          generation: transition.current.generation, storeID: $0,
          signInID: transition.current.signInID)
      }
    }

    /// The parts of `mark`.
    init(_ mark: MarkOutcome) {
      switch mark {
      case .observed(let transition):
        self.init(transition)
      case .createdFirst(let record, _):
        self.init(storedMark: record.mark, generation: record.generation, mark: mark)
      case .notObserved(let record, _), .failed(_, let record, _):
        self.init(storedMark: record?.mark, generation: record?.generation, mark: mark)
      }
    }

    /// The parts of an outcome other than ``MarkOutcome/observed(_:)``.
    private init(storedMark: WallClockInstant?, generation: UInt64?, mark: MarkOutcome) {
      self.storedMark = storedMark
      self.generation = generation
      error = mark.error
      reason = mark.reason
      binding = nil
    }
  }

  /// The one assembly (see ``init(evaluation:mark:items:)``).
  private init(
    evaluation: OfflineEvaluation, markParts: MarkParts, now: WallClockInstant,
    previousMark: WallClockInstant?, floor: BootClockFloor?, items summary: ItemTimeSummary?,
    cacheError: StoreError?
  ) {
    var reasons = evaluation.reasons.union(markParts.reason)
    // A sealed item store reads the clock mark its index is bound to: when that read failed
    // as the mark's own did, the failure is the mark's, reported once (as the mark's), and no
    // item file is at fault. (A key or seal problem is both stores' alike and stays on both:
    // its reason is the key's, not `item_unreadable`, and the command line prints it once.)
    let sameAsMark =
      cacheError != nil && cacheError == markParts.error
      && EligibilityReasons.sealing(cacheError!.code) == nil
    let cacheError = sameAsMark ? nil : cacheError
    if let cacheError {
      reasons.insert(EligibilityReasons.sealing(cacheError.code) ?? .itemUnreadable)
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
    self.now = now
    self.effectiveNow = evaluation.effectiveNow
    self.deadline = status == .fresh ? evaluation.deadline : nil
    self.mark = markParts.storedMark
    self.previousMark = previousMark
    self.generation = markParts.generation
    self.items = summary
    self.markErrorStorage = markParts.error.map(OutOfLine.init)
    self.cacheErrorStorage = cacheError.map(OutOfLine.init)
    self.floor = floor
    self.floorCheck = evaluation.floorCheck
    self.protections = evaluation.protections
    self.trustedTimeStorage = evaluation.trustedTimeStorage
    self.markBinding = markParts.binding
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
