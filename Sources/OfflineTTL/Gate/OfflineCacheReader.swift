/// Read-only access to a cache that was fresh when it was opened (<doc:Rules#Recheck-at-open-and-at-each-read>).
///
/// It has no write, delete or re-stamp API at all. Every read first checks the wall clock again:
/// past the opening decision's deadline, or behind the clock mark (the one seen at open or the
/// one stored now, whichever is later), it refuses with ``OfflineReadError`` and touches nothing.
/// With the boot-clock floor on, the deadline is judged from `max(wall, L)`, `L` carried forward
/// to the boot clock now, so a held-back wall clock cannot keep a reader alive.
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
  /// - Throws: ``OfflineReadError``: `deadline_passed`, `clock_behind_mark` or
  ///   `mark_unreadable` before anything is read; `item_unreadable` when the item fails its
  ///   checks or is dated after now, `too_old` when it is dated
  ///   before the decision's oldest item or beyond the max age (it is left alone either way).
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
      throw OfflineReadError(.itemUnreadable, cacheError: error, reason: error.reason)
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
  /// - Throws: ``OfflineReadError``: `item_unreadable` or `too_old`, naming the item's time.
  func checkServed(_ item: CacheItem, now: WallClockInstant) throws(OfflineReadError) {
    let writtenAt = item.writtenAt
    let name = "item \(item.key) was written at \(writtenAt.rfc3339)"
    if writtenAt > now {
      throw OfflineReadError(
        .itemUnreadable, reason: "\(name), after now (\(now.rfc3339)); refused, left alone")
    }
    if let oldest = decision.items?.oldest, writtenAt < oldest {
      throw OfflineReadError(
        .tooOld,
        reason: "\(name), before the oldest item the decision judged (\(oldest.rfc3339));"
          + " refused, left alone")
    }
    if writtenAt.saturatingAdvanced(by: gate.policy.maxAge) < now {
      throw OfflineReadError(
        .tooOld,
        reason: "\(name), more than the max age before now (\(now.rfc3339)); refused, left alone")
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
      throw OfflineReadError(.itemUnreadable, cacheError: error, reason: error.reason)
    }
  }

  /// Refuses when the wall clock is past the deadline or behind the mark.
  ///
  /// Reads the stored mark record first and the clocks after it (``Clocks/readForDecision()``),
  /// so a mark that another process raised while this reader waited is never later than the
  /// reading it is compared with.
  ///
  /// - Throws: ``OfflineReadError`` saying which.
  public func checkStillFresh() throws(OfflineReadError) {
    _ = try recheck()
  }

  /// ``checkStillFresh()``, returning the effective time it judged by (`max(wall, L)` with the
  /// floor on, else the wall clock).
  func recheck() throws(OfflineReadError) -> WallClockInstant {
    let stored: ClockMarkRecord
    do {
      stored = try gate.marks.read()
    } catch {
      throw OfflineReadError(.markUnreadable, markError: error, reason: error.reason)
    }
    let reading = gate.clocks.readForDecision()
    if let tpmError = reading.tpmError ?? stored.tpmChange(for: reading) {
      throw OfflineReadError(
        tpmError.code == .tpmChanged ? .tpmChanged : .tpmUnavailable, reason: tpmError.reason)
    }
    // While the stored record's server anchor holds, trusted time carried to now (in memory)
    // takes the wall clock's place: a wrong wall clock is not punished.
    let anchored = stored.trustedTime?.isAnchored == true
    let now = anchored ? stored.observing(reading).effectiveNow(wall: reading.wall) : reading.wall
    if let deadline = decision.deadline, now > deadline {
      throw OfflineReadError(
        .deadlinePassed,
        reason: "the cache expired at its deadline (\(deadline)); now is \(now)")
    }
    let mark = Swift.max(stored.mark, decision.mark ?? stored.mark)
    if now < mark {
      throw OfflineReadError(
        .clockBehindMark, reason: "the wall clock (\(now)) is behind the clock mark (\(mark))")
    }
    guard !anchored else { return now }
    // A held-back wall clock cannot keep a reader alive past its deadline
    // (<doc:Rules#Boot-clock-floor>).
    let effective = gate.effectiveNow(reading: reading, stored: stored, openedWith: decision.floor)
    if let deadline = decision.deadline, effective > deadline {
      throw OfflineReadError(
        .deadlinePassed,
        reason: "the cache expired at its deadline (\(deadline)); the boot clock shows real time"
          + " is at least \(effective) (the wall clock reads \(now))")
    }
    return effective
  }
}
