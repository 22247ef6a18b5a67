/// An ``OfflineCacheReader`` refused a read. Nothing was changed.
///
/// It carries every eligibility reason the reader's recheck found (the same reasons, judged by
/// the same rules, as ``OfflineAccessDecision/reasons``) and, for a store failure, the store's
/// error as the store threw it. When a newer sign-in's item set was judged and refused, it
/// carries that decision (``decision``), and its reasons are the decision's.
public struct OfflineReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The main reason for the refusal, as one code.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case deadlinePassed = "deadline_passed"
      case clockBehindMark = "clock_behind_mark"
      case markUnreadable = "mark_unreadable"
      case itemUnreadable = "item_unreadable"
      case tpmUnavailable = "tpm_unavailable"
      case tpmChanged = "tpm_changed"
      case refused
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The effective time is past the deadline of the decision the reader was opened with.
    public static let deadlinePassed = Code(.deadlinePassed)
    /// The wall clock went behind the clock mark after the reader was opened.
    public static let clockBehindMark = Code(.clockBehindMark)
    /// The mark record could not be read to check the clock; see ``OfflineReadError/storeError``.
    public static let markUnreadable = Code(.markUnreadable)
    /// The item could not be read; see ``OfflineReadError/storeError``.
    public static let itemUnreadable = Code(.itemUnreadable)
    /// The configured TPM could not be read to check the time.
    public static let tpmUnavailable = Code(.tpmUnavailable)
    /// The TPM is not the one the record was written with.
    public static let tpmChanged = Code(.tpmChanged)
    /// Another rule refused (the boot-clock floor's reasons); see ``OfflineReadError/reasons``.
    public static let refused = Code(.refused)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// Every reason the recheck found (`too_old` for a passed deadline).
  public let reasons: EligibilityReasons
  /// The store's error as the store threw it: the mark store's for `mark_unreadable`, the item
  /// store's for `item_unreadable`.
  public let storeError: StoreError?
  /// A sentence for people.
  public let reason: String
  /// The decision that refused, when a newer online sign-in had committed and the reader judged
  /// its item set as a new open would (``OfflineCacheReader``); `nil` for a refusal of the
  /// reader's own recheck or of the item read.
  public let decision: OfflineAccessDecision?

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - reasons: Every reason found; not empty.
  ///   - storeError: The store's error behind `mark_unreadable` or `item_unreadable`.
  ///   - reason: A sentence for people.
  public init(reasons: EligibilityReasons, storeError: StoreError? = nil, reason: String) {
    self.reasons = reasons
    self.storeError = storeError
    self.reason = reason
    self.decision = nil
  }

  /// The refusal of a newer sign-in's item set: the decision's reasons, its store error (the
  /// mark store's for a mark reason, else the item store's), and a sentence naming them.
  ///
  /// - Parameter decision: The decision of the new set; `expired`.
  public init(refusedBy decision: OfflineAccessDecision) {
    self.reasons = decision.reasons
    self.storeError = decision.markError ?? decision.cacheError
    let generation = decision.generation.map { " \($0)" } ?? ""
    let cause = (decision.markError ?? decision.cacheError).map { " (\($0.reason))" } ?? ""
    self.reason =
      "a newer online sign-in (generation\(generation)) committed since this reader's decision,"
      + " and its item set is refused: \(decision.reasons)\(cause)"
    self.decision = decision
  }

  /// The main reason as one code: a store failure first, then the TPM's reasons, then
  /// `clock_behind_mark`, then `deadline_passed` (for `too_old`), else `refused`.
  public var code: Code {
    if reasons.contains(.markUnreadable) { return .markUnreadable }
    if reasons.contains(.itemUnreadable) { return .itemUnreadable }
    if reasons.contains(.tpmChanged) { return .tpmChanged }
    if reasons.contains(.tpmUnavailable) { return .tpmUnavailable }
    if reasons.contains(.clockBehindMark) { return .clockBehindMark }
    if reasons.contains(.tooOld) { return .deadlinePassed }
    return .refused
  }

  /// ``storeError`` for `mark_unreadable` (and, for a newer sign-in's refused ``decision``,
  /// that decision's mark store error), else `nil`.
  public var markError: StoreError? {
    if let decision { return decision.markError }
    return reasons.contains(.markUnreadable) ? storeError : nil
  }
  /// ``storeError`` for `item_unreadable` (and, for a newer sign-in's refused ``decision``,
  /// that decision's item store error), else `nil`.
  public var cacheError: StoreError? {
    if let decision { return decision.cacheError }
    return reasons.contains(.itemUnreadable) ? storeError : nil
  }

  /// The eligibility reasons (the same as ``reasons``).
  public var eligibilityReason: EligibilityReasons { reasons }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
