import Synchronization

/// Read-only access to a cache that was fresh when it was opened
/// (<doc:Rules#Recheck-at-open-and-at-each-read>).
///
/// It has no write, delete or re-stamp API at all. Every read first rechecks with the same rules
/// as the gate (``OfflinePolicySet``) over the items judged at open, the stored mark and the
/// clocks now: past the opening decision's deadline (judged from the effective time, so a
/// held-back wall clock cannot keep a reader alive), behind the clock mark (the one seen at open
/// or the one stored now, whichever is later), or without the boot clock the policy asks for, it
/// refuses with ``OfflineReadError`` and touches nothing.
///
/// **A newer sign-in.** When an online sign-in committed since this reader's decision (the stored
/// mark's generation is not the decision's), the item set is the new sign-in's, and the old
/// decision says nothing about it. The read then judges the new set as a new open would
/// (``OfflineAccessGate/checkEligibility()``: the mark observed under its lock, the clocks read
/// there, the new set's summary): when that decision is fresh, it becomes this reader's
/// ``decision`` and the item is read from the new set; when it is not, the read is refused with
/// its reasons (``OfflineReadError/decision`` holds it). After each item is read the mark's
/// generation is read again, and the read starts over when a sign-in committed meanwhile, so an
/// item is only ever served with the decision of the generation it was read for (at most
/// ``maximumAttempts`` times, then `item_unreadable` with `store_unusable`).
public struct OfflineCacheReader: Sendable {
  let gate: OfflineAccessGate
  private let current: Current

  /// How many times one read starts over when sign-ins keep committing during it.
  public static let maximumAttempts = 8

  /// The decision a reader serves by, shared by its copies.
  private final class Current: Sendable {
    let decision: Mutex<OfflineAccessDecision>
    init(_ decision: OfflineAccessDecision) { self.decision = Mutex(decision) }
  }

  init(gate: OfflineAccessGate, decision: OfflineAccessDecision) {
    self.gate = gate
    self.current = Current(decision)
  }

  /// The fresh decision this reader serves by: the one it was opened with, or, once a read met a
  /// newer sign-in's set, that set's fresh decision (see the type's discussion).
  public var decision: OfflineAccessDecision { current.decision.withLock { $0 } }

  /// The last instant at which reads are allowed (the current decision's deadline).
  public var deadline: WallClockInstant? { decision.deadline }

  /// One item's bytes and `writtenAt`, or `nil` when no item has that key.
  ///
  /// The item served is the item judged: after the store's own checks (length, checksum), the
  /// item's own `writtenAt` must agree with the decision it is served by. It must
  /// not be after the time now (the effective time, with the boot-clock floor:
  /// `item_unreadable`); it must not be before the oldest item the decision judged, nor more
  /// than the max age before now (`too_old`). An item newer than the newest the decision
  /// judged, and not after now, is served: an online session of the same generation may have
  /// written it after the decision, and it is only fresher. An older copy of an
  /// item put in place behind the index is refused, with the item's own time in the reason.
  /// An item dated after now is judged again with a later reading (an online session of the
  /// same generation may have written it after this read's clocks were taken) and refused only
  /// when it is still after now at the last of ``maximumAttempts`` readings.
  /// When a newer sign-in committed, the read judges its set first (see the type's discussion);
  /// when that sign-in left nothing cached, the answer is `nil`.
  ///
  /// - Parameter key: The item's key.
  /// - Returns: The item, exactly as the online session wrote it.
  /// - Throws: ``OfflineReadError``: any recheck reason (`too_old` past the deadline,
  ///   `clock_behind_mark`, the floor's reasons, `mark_unreadable`) before anything is read;
  ///   a newer sign-in's refused decision, with its reasons; `item_unreadable` when the item
  ///   fails its checks or is dated after now, `too_old` when it is dated before the decision's
  ///   oldest item or beyond the max age (it is left alone either way).
  ///
  /// Blocks the calling thread on `flock` (a shared lock of the mark store, then the item
  /// store's reads; the mark store's lock again, exclusive, when a newer sign-in's set is
  /// judged); from Swift concurrency use ``itemAsync(forKey:)``.
  /// - Complexity: Two reads of the mark record and the clocks (the recheck before the item,
  ///   and the same judgement again once the item was read, before it is returned: time spent
  ///   reading it cannot carry the read past the deadline or past a raised mark; a sealed store
  ///   reads the record no third time: the item set is checked against the record the decision
  ///   observed) plus O(payload size).
  public func item(forKey key: CacheItemKey) throws(OfflineReadError) -> CacheItem? {
    // A sealed store's key is read once for the whole read.
    try SealingKeyScope.run { () throws(OfflineReadError) -> CacheItem? in
      try itemInKeyScope(key)
    }
  }

  private func itemInKeyScope(_ key: CacheItemKey) throws(OfflineReadError) -> CacheItem? {
    var datedAfterNow: OfflineReadError?
    for _ in 0..<Self.maximumAttempts {
      guard let (decision, _) = try recheck() else { return nil }
      let item: CacheItem?
      do {
        item = try Self.item(key, judgedBy: decision, in: gate.cache)
      } catch {
        guard isCurrent(decision) else { continue }
        throw Self.refusal(error, otherwise: .itemUnreadable)
      }
      // A sign-in that committed during the read may have put its own set in place; time
      // spent reading may have passed the deadline or met a raised mark: judge again.
      guard let confirmed = try confirm(decision) else { continue }
      guard let item else { return nil }
      do {
        try checkServed(item, now: confirmed, decision: decision)
      } catch {
        // An online session of this generation may have written the item after this read's
        // clocks were taken: judge again with a later reading before refusing it.
        guard item.writtenAt > confirmed else { throw error }
        datedAfterNow = error
        continue
      }
      return item
    }
    throw datedAfterNow ?? Self.keptReplacing
  }

  /// The refusal after ``maximumAttempts`` reads that each met a newer sign-in.
  static var keptReplacing: OfflineReadError {
    let error = StoreError(
      code: .storeUnusable,
      message: "online sign-ins kept replacing the item set during this read; try again")
    return OfflineReadError(reasons: .itemUnreadable, storeError: error, reason: error.reason)
  }

  /// Whether the mark's generation is still the one `decision` was made at (read after the
  /// stored mark; an unreadable mark is not, and the next recheck refuses it).
  func isCurrent(_ decision: OfflineAccessDecision) -> Bool {
    guard let generation = decision.generation else { return true }
    return (try? gate.marks.read().generation) == generation
  }

  /// Refuses an item whose own `writtenAt` disagrees with the decision it is served by (see
  /// ``item(forKey:)``).
  ///
  /// - Parameters:
  ///   - item: The item as read from the store.
  ///   - now: The effective time of this read (`max(wall, L)` with the floor on).
  ///   - decision: The decision of the generation the item was read for; this reader's
  ///     ``decision`` when `nil`.
  /// - Throws: ``OfflineReadError``: `item_unreadable` or `too_old` (its code is
  ///   `deadline_passed`, as for every `too_old` of a reader, so the sentence starts with
  ///   `too_old:`), naming the item's time.
  func checkServed(
    _ item: CacheItem, now: WallClockInstant, decision: OfflineAccessDecision? = nil
  ) throws(OfflineReadError) {
    try checkServed(item.key, writtenAt: item.writtenAt, now: now, decision: decision)
  }

  /// ``checkServed(_:now:decision:)`` for an item known by its header (a streamed read).
  func checkServed(
    _ key: CacheItemKey, writtenAt: WallClockInstant, now: WallClockInstant,
    decision: OfflineAccessDecision? = nil
  ) throws(OfflineReadError) {
    let decision = decision ?? self.decision
    let name = "item \(key) was written at \(writtenAt.rfc3339)"
    if writtenAt > now {
      throw OfflineReadError(
        reasons: .itemUnreadable, reason: "\(name), after now (\(now.rfc3339)); refused, left alone"
      )
    }
    if let oldest = decision.items?.oldest, writtenAt < oldest {
      throw OfflineReadError(
        reasons: .tooOld,
        reason: "too_old: \(name), before the oldest item the decision judged"
          + " (\(oldest.rfc3339)); refused, left alone")
    }
    if writtenAt.saturatingAdvanced(by: gate.policy.maxAge) < now {
      throw OfflineReadError(
        reasons: .tooOld,
        reason:
          "too_old: \(name), more than the max age before now (\(now.rfc3339)); refused, left alone"
      )
    }
  }

  /// Every key of the set the current decision judged, in ascending byte order (a newer
  /// sign-in's set is judged first, as ``item(forKey:)`` does).
  ///
  /// - Returns: The keys.
  /// - Throws: As ``item(forKey:)``.
  /// - Complexity: O(n log n).
  public func keys() throws(OfflineReadError) -> [CacheItemKey] {
    try SealingKeyScope.run { () throws(OfflineReadError) -> [CacheItemKey] in
      try keysInKeyScope()
    }
  }

  private func keysInKeyScope() throws(OfflineReadError) -> [CacheItemKey] {
    for _ in 0..<Self.maximumAttempts {
      guard let (decision, _) = try recheck() else { return [] }
      let keys: [CacheItemKey]
      do {
        keys = try Self.keys(judgedBy: decision, in: gate.cache)
      } catch {
        guard isCurrent(decision) else { continue }
        throw Self.refusal(error, otherwise: .itemUnreadable)
      }
      guard isCurrent(decision) else { continue }
      return keys
    }
    throw Self.keptReplacing
  }

  /// Rechecks now.
  ///
  /// Reads the stored mark record first and the clocks after it (``Clocks/readForDecision()``),
  /// so a mark that another process raised while this reader waited for the lock is never later
  /// than the reading it is compared with. Then judges, with the gate's rules, the items of the
  /// current decision against the later of the stored mark and the mark it saw, the floor
  /// carried forward to the boot clock now (the later of the stored floor and the decision's
  /// floor), and the decision's deadline; nothing is written. When a newer sign-in committed
  /// (the stored generation is not the decision's), judges its set as a new open would, which
  /// observes the mark as every check does; a fresh decision becomes the reader's.
  ///
  /// - Throws: ``OfflineReadError`` with every reason found (a newer sign-in's refused decision
  ///   in ``OfflineReadError/decision``; a newer sign-in that left nothing cached is no
  ///   refusal).
  public func checkStillFresh() throws(OfflineReadError) {
    _ = try recheck()
  }

  /// ``checkStillFresh()``, returning the decision to serve by and the effective time it judged
  /// by (`max(wall, L)` with the floor on, trusted time while a server anchor holds, else the
  /// wall clock); `nil` when a newer sign-in left nothing cached.
  func recheck() throws(OfflineReadError) -> (OfflineAccessDecision, WallClockInstant)? {
    let decision = self.decision
    let stored = try storedRecord()
    if let generation = decision.generation, stored.generation != generation {
      return try reopen()
    }
    return (decision, try judge(decision, stored: stored))
  }

  /// The recheck again once the item was found, just before anything of it is served: the
  /// stored mark read again, the clocks after it, and `decision` judged as ``recheck()`` judges
  /// it, so that time spent finding and reading the item (a slow disk, a paused process, a mark
  /// that another process raised meanwhile) cannot carry a read past the deadline or past a
  /// clock set behind the mark. `nil` when a sign-in committed since (the stored generation is
  /// not `decision`'s): the read starts over.
  ///
  /// - Parameter decision: The decision the item was read for.
  /// - Returns: The effective time of this confirmation, or `nil`.
  /// - Throws: ``OfflineReadError``, as ``recheck()``.
  func confirm(_ decision: OfflineAccessDecision) throws(OfflineReadError) -> WallClockInstant? {
    let stored = try storedRecord()
    if let generation = decision.generation, stored.generation != generation { return nil }
    return try judge(decision, stored: stored)
  }

  /// The stored mark record, or the refusal for an unreadable one (a sealing key or seal
  /// problem keeps its own reason).
  private func storedRecord() throws(OfflineReadError) -> ClockMarkRecord {
    do {
      return try gate.marks.read()
    } catch {
      throw Self.refusal(error, otherwise: .markUnreadable)
    }
  }

  /// The refusal for a store failure met while reading: the sealing key's or seal's own reason
  /// (`key_unavailable`, `key_required`, `seal_mismatch`: ``EligibilityReasons/sealing(_:)``),
  /// as a new open gives it, else `otherwise`.
  static func refusal(_ error: StoreError, otherwise: EligibilityReasons) -> OfflineReadError {
    OfflineReadError(
      reasons: EligibilityReasons.sealing(error.code) ?? otherwise, storeError: error,
      reason: error.reason)
  }

  /// The item of `key` in the set `decision` judged, also while a sign-in is between its commit
  /// point and its end; a sealed set by the record the decision observed (no second read of
  /// it). An unbound read when the decision has no generation.
  static func item(
    _ key: CacheItemKey, judgedBy decision: OfflineAccessDecision, in cache: any CacheItemStore
  ) throws(StoreError) -> CacheItem? {
    if let binding = decision.markBinding, let bound = cache as? any MarkBoundItemReading {
      return try bound.item(forKey: key, boundTo: binding)
    } else if let generation = decision.generation {
      return try cache.item(forKey: key, generation: generation)
    }
    return try cache.item(forKey: key)
  }

  /// The keys of the set `decision` judged (see ``item(_:judgedBy:in:)``).
  static func keys(judgedBy decision: OfflineAccessDecision, in cache: any CacheItemStore)
    throws(StoreError) -> [CacheItemKey]
  {
    if let binding = decision.markBinding, let bound = cache as? any MarkBoundItemReading {
      return try bound.keys(boundTo: binding)
    } else if let generation = decision.generation {
      return try cache.keys(forGeneration: generation)
    }
    return try cache.keys()
  }

  /// Judges `decision` against `stored` and the clocks read now (after it): the recheck's rules
  /// (see ``checkStillFresh()``). Returns the effective time it judged by.
  private func judge(_ decision: OfflineAccessDecision, stored: ClockMarkRecord)
    throws(OfflineReadError) -> WallClockInstant
  {
    let reading = gate.clocks.readForDecision()
    if let refusal = stored.machineRefusal(for: reading) {
      throw OfflineReadError(
        reasons: .markUnreadable, storeError: refusal, reason: refusal.reason)
    }
    let previous = Swift.max(stored.mark, decision.mark ?? stored.mark)
    var record = stored.observing(reading)
    if let opened = decision.floor?.advanced(to: reading.boot), !opened.isUntrusted,
      !record.floor.isUntrusted, opened.lowerBound > record.floor.lowerBound
    {
      record.floor = opened
    }
    let inputs = OfflineDecisionInputs(
      items: decision.items, reading: reading, previousMark: previous, record: record,
      recordBefore: stored)
    let evaluation = OfflinePolicySet().evaluate(inputs, policy: gate.policy)
    // The reader keeps its opening decision's word on the floor's other reasons (the next check
    // judges them); its deadline is judged from the effective time (max(wall, L), or trusted
    // time while a server anchor holds), so a held clock cannot extend it.
    var reasons = evaluation.reasons.intersection([
      .clockBehindMark, .tooOld, .bootClockUnavailable, .tpmUnavailable, .tpmChanged,
    ])
    if let deadline = decision.deadline, evaluation.effectiveNow > deadline {
      reasons.insert(.tooOld)
    }
    guard reasons.isEmpty else {
      throw OfflineReadError(
        reasons: reasons,
        reason: Self.explain(reasons, reading: reading, mark: previous, evaluation: evaluation))
    }
    return evaluation.effectiveNow
  }

  /// A newer sign-in's set, judged as a new open would judge it: a fresh decision becomes this
  /// reader's (unless a read on another thread already adopted a later one); `nil` for
  /// `unavailable`; any other decision is refused with its reasons.
  private func reopen() throws(OfflineReadError) -> (OfflineAccessDecision, WallClockInstant)? {
    let decision = gate.checkEligibility()
    switch decision.status {
    case .fresh:
      current.decision.withLock { adopted in
        if (adopted.generation ?? 0) <= (decision.generation ?? 0) { adopted = decision }
      }
      return (decision, decision.effectiveNow)
    case .unavailable:
      return nil
    case .expired:
      throw OfflineReadError(refusedBy: decision)
    }
  }

  /// A sentence for the reasons of a refused recheck.
  private static func explain(
    _ reasons: EligibilityReasons, reading: ClockObservation, mark: WallClockInstant,
    evaluation: OfflineEvaluation
  ) -> String {
    let now = reading.wall
    let trusted = evaluation.trustedTime?.trustedNow
    var parts: [String] = []
    if reasons.contains(.clockBehindMark) {
      if let trusted {
        parts.append("the trusted time (\(trusted)) is behind the clock mark (\(mark))")
      } else {
        parts.append("the wall clock (\(now)) is behind the clock mark (\(mark))")
      }
    }
    if reasons.contains(.tooOld) {
      let deadline = evaluation.deadline.map { "\($0)" } ?? "its deadline"
      if let trusted {
        parts.append(
          "the cache expired at its deadline (\(deadline)); trusted time is \(trusted) (the wall"
            + " clock reads \(now))")
      } else if evaluation.effectiveNow > now {
        parts.append(
          "the cache expired at its deadline (\(deadline)); the boot clock shows real time"
            + " is at least \(evaluation.effectiveNow) (the wall clock reads \(now))")
      } else {
        parts.append("the cache expired at its deadline (\(deadline)); now is \(now)")
      }
    }
    if reasons.contains(.bootClockUnavailable) {
      parts.append(
        "the boot-clock floor is on but no boot clock can be read now or was read at the last"
          + " sign-in (turn the floor off where there is none)")
    }
    if let error = evaluation.trustedTime?.tpmError {
      parts.append("the TPM clock cannot carry trusted time: \(error.reason)")
    }
    let other = reasons.subtracting([
      .clockBehindMark, .tooOld, .bootClockUnavailable, .tpmUnavailable, .tpmChanged,
    ])
    if !other.isEmpty { parts.append("refused: \(other)") }
    return parts.joined(separator: "; ")
  }
}
