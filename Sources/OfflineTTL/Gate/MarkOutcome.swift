/// What happened to the clock mark in one decision: the mark half of what
/// ``OfflineAccessDecision/init(evaluation:mark:items:)`` is built from.
///
/// Every case carries the clocks read for the decision, taken under the mark store's lock or
/// after the store's answer about the stored mark.
public enum MarkOutcome: Sendable, Hashable {
  /// The stored record was observed under the lock (advanced and, when the rise reached the
  /// resolution, written).
  case observed(ClockMarkTransition)
  /// Trust on first use created the first record (generation 0) at this reading.
  case createdFirst(ClockMarkRecord, ClockObservation)
  /// Not observed (nothing is cached, so the mark is left unchanged): the record read first,
  /// if any, and the clocks read after it.
  case notObserved(ClockMarkRecord?, ClockObservation)
  /// The store failed: the error, the record still readable after it (for a failed write), and
  /// the clocks read after the store's answer.
  case failed(StoreError, stored: ClockMarkRecord?, ClockObservation)

  /// The clocks read for this decision.
  public var reading: ClockObservation {
    switch self {
    case .observed(let transition): transition.observation
    case .createdFirst(_, let reading), .notObserved(_, let reading), .failed(_, _, let reading):
      reading
    }
  }

  /// The stored mark the rule compares with: the mark before this observation (`nil` on first
  /// use, and when none can be read).
  public var previousMark: WallClockInstant? {
    switch self {
    case .observed(let transition): transition.previous.mark
    case .createdFirst: nil
    case .notObserved(let record, _), .failed(_, let record, _): record?.mark
    }
  }

  /// The record as stored before this observation: `nil` on first use and when none can be read.
  public var recordBefore: ClockMarkRecord? {
    switch self {
    case .observed(let transition): transition.previous
    case .createdFirst: nil
    case .notObserved(let record, _), .failed(_, let record, _): record
    }
  }

  /// The record after this observation, its floor carried forward (in memory where it was not
  /// written); `nil` when no record can be read.
  public var recordAfter: ClockMarkRecord? {
    switch self {
    case .observed(let transition): transition.current
    case .createdFirst(let record, _): record
    case .notObserved(let record, let reading), .failed(_, let record, let reading):
      record?.observing(reading)
    }
  }

  /// The mark stored when the decision returns, `nil` when none can be read.
  public var storedMark: WallClockInstant? {
    switch self {
    case .observed(let transition): transition.storedMark
    case .createdFirst(let record, _): record.mark
    case .notObserved(let record, _), .failed(_, let record, _): record?.mark
    }
  }

  /// The stored record's generation, when one can be read.
  public var generation: UInt64? {
    switch self {
    case .observed(let transition): transition.current.generation
    case .createdFirst(let record, _): record.generation
    case .notObserved(let record, _), .failed(_, let record, _): record?.generation
    }
  }

  /// The generation whose item set this decision judges, when the mark was observed or created
  /// under the lock (a sign-in that commits later changes it); `nil` otherwise.
  public var generationObserved: UInt64? {
    switch self {
    case .observed(let transition): transition.previous.generation
    case .createdFirst(let record, _): record.generation
    case .notObserved, .failed: nil
    }
  }

  /// The store's error, for `failed`.
  public var error: StoreError? {
    if case .failed(let error, _, _) = self { return error }
    return nil
  }

  /// The reason the store's failure adds: `mark_missing` (absent), `mark_unreadable` (also for
  /// `insecure_store`, `store_from_another_machine`, `machine_id_unreadable` and
  /// `mark_unauthentic`: the record cannot be trusted here), the sealing key's own reason
  /// (`key_unavailable`, `key_required`, `seal_mismatch`: ``EligibilityReasons/sealing(_:)``), or
  /// `mark_not_persisted` (any other failure: the advanced mark is not durable); empty otherwise.
  public var reason: EligibilityReasons {
    guard let error else { return [] }
    if let sealing = EligibilityReasons.sealing(error.code) { return sealing }
    switch error.code {
    case .absent: return .markMissing
    case .unreadable, .insecureStore, .storeFromAnotherMachine, .machineIDUnreadable,
      .markUnauthentic:
      return .markUnreadable
    default: return .markNotPersisted
    }
  }
}
