/// Read-only access to a cache that was fresh when it was opened
/// (<doc:Rules#Recheck-at-open-and-at-each-read>).
///
/// It has no write, delete or re-stamp API at all. Every read first rechecks with the same rules
/// as the gate (``OfflinePolicySet``) over the items judged at open, the stored mark and the
/// clocks now: past the opening decision's deadline (judged from the effective time, so a
/// held-back wall clock cannot keep a reader alive), behind the clock mark (the one seen at open
/// or the one stored now, whichever is later), or without the boot clock the policy asks for, it
/// refuses with ``OfflineReadError`` and touches nothing.
public struct OfflineCacheReader: Sendable {
  let gate: OfflineAccessGate
  /// The fresh decision this reader was opened with.
  public let decision: OfflineAccessDecision

  init(gate: OfflineAccessGate, decision: OfflineAccessDecision) {
    self.gate = gate
    self.decision = decision
  }

  /// The last instant at which reads are allowed (the opening decision's deadline).
  public var deadline: WallClockInstant? { decision.deadline }

  /// One item's bytes and `writtenAt`, or `nil` when no item has that key.
  ///
  /// The item served is the item judged: after the store's own checks (length, checksum), the
  /// item's own `writtenAt` must agree with the decision this reader was opened with. It must
  /// not be after the time now (the effective time, with the boot-clock floor:
  /// `item_unreadable`); it must not be before the oldest item the decision judged, nor more
  /// than the max age before now (`too_old`). An item newer than the newest the decision
  /// judged, and not after now, is served: an online session of the same generation may have
  /// written it after the decision, and it is only fresher. An older copy of an
  /// item put in place behind the index is refused, with the item's own time in the reason.
  ///
  /// - Parameter key: The item's key.
  /// - Returns: The item, exactly as the online session wrote it.
  /// - Throws: ``OfflineReadError``: any recheck reason (`too_old` past the deadline,
  ///   `clock_behind_mark`, the floor's reasons, `mark_unreadable`) before anything is read;
  ///   `item_unreadable` when the item fails its checks or is dated after now, `too_old` when
  ///   it is dated
  ///   before the decision's oldest item or beyond the max age (it is left alone either way).
  ///
  /// Blocks the calling thread on `flock` (a shared lock of the mark store, then the item
  /// store's reads); from Swift concurrency use ``itemAsync(forKey:)``.
  /// - Complexity: One read of the mark record plus O(payload size).
  public func item(forKey key: CacheItemKey) throws(OfflineReadError) -> CacheItem? {
    let now = try recheck()
    let item: CacheItem?
    do {
      // The set this reader's decision judged, also while a sign-in is between its commit point
      // and its end.
      if let generation = decision.generation {
        item = try gate.cache.item(forKey: key, generation: generation)
      } else {
        item = try gate.cache.item(forKey: key)
      }
    } catch {
      throw OfflineReadError(reasons: .itemUnreadable, storeError: error, reason: error.reason)
    }
    guard let item else { return nil }
    try checkServed(item, now: now)
    return item
  }

  /// Refuses an item whose own `writtenAt` disagrees with this reader's decision (see
  /// ``item(forKey:)``).
  ///
  /// - Parameters:
  ///   - item: The item as read from the store.
  ///   - now: The effective time of this read (`max(wall, L)` with the floor on).
  /// - Throws: ``OfflineReadError``: `item_unreadable` or `too_old` (its code is
  ///   `deadline_passed`, as for every `too_old` of a reader, so the sentence starts with
  ///   `too_old:`), naming the item's time.
  func checkServed(_ item: CacheItem, now: WallClockInstant) throws(OfflineReadError) {
    try checkServed(item.key, writtenAt: item.writtenAt, now: now)
  }

  /// ``checkServed(_:now:)`` for an item known by its header (a streamed read).
  func checkServed(_ key: CacheItemKey, writtenAt: WallClockInstant, now: WallClockInstant)
    throws(OfflineReadError)
  {
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

  /// Every key in the cache, in ascending byte order.
  ///
  /// - Returns: The keys.
  /// - Throws: As ``item(forKey:)``.
  /// - Complexity: O(n log n).
  public func keys() throws(OfflineReadError) -> [CacheItemKey] {
    try checkStillFresh()
    do {
      return try gate.cache.keys()
    } catch {
      throw OfflineReadError(reasons: .itemUnreadable, storeError: error, reason: error.reason)
    }
  }

  /// Rechecks now, writing nothing.
  ///
  /// Reads the stored mark record first and the clocks after it (``Clocks/readForDecision()``),
  /// so a mark that another process raised while this reader waited for the lock is never later
  /// than the reading it is compared with. Then judges, with the gate's rules, the items seen at
  /// open against the later of the stored mark and the mark seen at open, the floor carried
  /// forward to the boot clock now (the later of the stored floor and the floor seen at open),
  /// and the opening decision's deadline.
  ///
  /// - Throws: ``OfflineReadError`` with every reason found.
  public func checkStillFresh() throws(OfflineReadError) {
    _ = try recheck()
  }

  /// ``checkStillFresh()``, returning the effective time it judged by (`max(wall, L)` with the
  /// floor on, trusted time while a server anchor holds, else the wall clock).
  func recheck() throws(OfflineReadError) -> WallClockInstant {
    let stored: ClockMarkRecord
    do {
      stored = try gate.marks.read()
    } catch {
      throw OfflineReadError(reasons: .markUnreadable, storeError: error, reason: error.reason)
    }
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
