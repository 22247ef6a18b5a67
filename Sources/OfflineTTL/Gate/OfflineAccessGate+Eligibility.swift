extension OfflineAccessGate {
  /// Decides whether the cache may be used offline now (<doc:Rules#Eligibility-rule>, <doc:Rules#Clock-mark>, <doc:Rules#Fail-closed>).
  ///
  /// Summarizes the items (count, oldest, newest: no payload is read); an empty cache is
  /// `unavailable` and nothing is written. Otherwise the clocks are read *under the mark store's
  /// lock* and observed through it, durably, before `fresh` can be returned, and the eligibility rule
  /// is applied against the mark as it was before this observation. Reading the clocks under the
  /// lock, after the summary, means a concurrent process's newer mark or newer items can never
  /// look like a rollback, a future-dated item or a boot clock going backward.
  ///
  /// Never throws: a store failure is an `expired` decision carrying the typed error, with
  /// reason `mark_missing` (no mark while items exist; unless ``EligibilityPolicy/trustOnFirstUse``
  /// lets the gate create it), `mark_unreadable` (its bytes are left alone),
  /// `mark_not_persisted` (the advanced mark could not be made durable; the old one is intact)
  /// or `item_unreadable` (nothing is deleted). Every other reason that applies is added too.
  ///
  /// Blocks the calling thread on `flock` and, when the mark rises, on `fdatasync` (file
  /// stores); from Swift concurrency use ``checkEligibilityAsync()``.
  ///
  /// - Returns: The decision.
  /// - Complexity: O(1) in the number of items with ``DirectoryCacheStore`` (its index), plus
  ///   one durable mark write when the mark rises by at least ``EligibilityPolicy/markResolution``.
  public func checkEligibility() -> OfflineAccessDecision {
    // While a sign-in is between its commit point and its end (or was killed there), the item
    // set depends on the mark's generation: read it for the generation observed, then check
    // that no newer sign-in committed meanwhile (a few attempts, then a refusal).
    for _ in 0..<3 {
      let settled: ItemTimeSummary?
      do {
        settled = try cache.summaryIfSettled()
      } catch {
        return refusal(cacheError: error)
      }
      if let settled { return checkEligibility(items: settled) }
      let transition: ClockMarkTransition
      do {
        transition = try marks.observe(
          resolution: policy.markResolution, readingClocks: clocks.readForDecision)
      } catch {
        // No generation to pair the items with: judge the mark failure with the live set.
        return refusal(markError: error, items: (try? cache.summary()) ?? .empty)
      }
      let generation = transition.previous.generation
      let items: ItemTimeSummary
      do {
        items = try cache.summary(forGeneration: generation)
      } catch {
        return refusal(cacheError: error)
      }
      guard (try? marks.read().generation) == generation else { continue }
      guard items.count > 0 else {
        return OfflineAccessDecision(
          status: .unavailable, reasons: [], now: transition.observation.wall, deadline: nil,
          mark: transition.storedMark, previousMark: transition.previous.mark,
          generation: generation, items: items)
      }
      return decision(items: items, transition: transition)
    }
    return refusal(
      cacheError: StoreError(
        code: .storeUnusable,
        message: "online sign-ins kept replacing the item set during this check; try again"))
  }

  /// ``checkEligibility()`` for an item set that does not depend on the mark's generation.
  private func checkEligibility(items: ItemTimeSummary) -> OfflineAccessDecision {
    guard items.count > 0 else {
      // The eligibility rule: nothing cached is `unavailable`, and the mark is left unchanged.
      // The stored mark is read first, the clocks after it.
      let record = try? marks.read()
      let now = clocks.readForDecision().wall
      return OfflineAccessDecision(
        status: .unavailable, reasons: [], now: now, deadline: nil, mark: record?.mark,
        previousMark: record?.mark, generation: record?.generation, items: items)
    }
    let transition: ClockMarkTransition
    do {
      transition = try marks.observe(
        resolution: policy.markResolution, readingClocks: clocks.readForDecision)
    } catch {
      return refusal(markError: error, items: items)
    }
    return decision(items: items, transition: transition)
  }

  /// The decision for an observation that succeeded: the eligibility rule against the mark before it,
  /// then the boot-clock floor.
  ///
  /// While a server anchor holds, the time of the decision is the trusted time (the wall clock is
  /// only reported), the mark rule is applied to it, and the floor layer is not needed (trusted
  /// time is already carried by the clocks nobody can set). A configured TPM that could not be
  /// read or is not the recorded one adds `tpm_unavailable` or `tpm_changed`.
  private func decision(items: ItemTimeSummary, transition: ClockMarkTransition)
    -> OfflineAccessDecision
  {
    let trusted = TrustedTimeVerdict(transition: transition)
    let now = trusted?.trustedNow ?? transition.observation.wall
    assert(transition.current.mark >= transition.previous.mark, "the mark never decreases")
    let markRule = policy.evaluate(items, now: now, mark: transition.previous.mark)
    var (evaluation, check) =
      trusted?.trustedNow != nil
      ? (markRule, nil)
      : applyingFloor(to: markRule, record: transition.current, now: now)
    if let trusted, !trusted.reasons.isEmpty, evaluation.status != .unavailable {
      evaluation = EligibilityEvaluation(
        status: .expired, reasons: evaluation.reasons.union(trusted.reasons),
        now: evaluation.now, previousMark: evaluation.previousMark,
        updatedMark: evaluation.updatedMark, items: evaluation.items, maxAge: evaluation.maxAge,
        deadline: nil)
    }
    return OfflineAccessDecision(
      status: evaluation.status, reasons: evaluation.reasons, now: now,
      deadline: evaluation.deadline, mark: transition.storedMark,
      previousMark: transition.previous.mark, generation: transition.current.generation,
      items: items, floor: transition.current.floor, floorCheck: check, trustedTime: trusted)
  }

  /// The refusal for an item store failure. The clock is still observed (best effort), so that
  /// the time is seen.
  private func refusal(cacheError: CacheStoreError) -> OfflineAccessDecision {
    let transition = try? marks.observe(
      resolution: policy.markResolution, readingClocks: clocks.readForDecision)
    // Without a transition the clocks are read after the store's attempt to read the mark.
    let now = transition?.observation.wall ?? clocks.readForDecision().wall
    var reasons: EligibilityReasons = .itemUnreadable
    if let previous = transition?.previous.mark, now < previous {
      reasons.insert(.clockBehindMark)
    }
    return OfflineAccessDecision(
      status: .expired, reasons: reasons, now: now, deadline: nil,
      mark: transition?.storedMark, previousMark: transition?.previous.mark,
      generation: transition?.current.generation, items: nil, cacheError: cacheError)
  }

  /// The refusal (or, with trust-on-first-use, the first mark) for a mark store failure. Every
  /// clock reading here comes after the store's failed attempt to read the stored mark, or (for
  /// the first mark and a stored mark read again) under the lock.
  private func refusal(markError: ClockMarkStoreError, items: ItemTimeSummary)
    -> OfflineAccessDecision
  {
    var error = markError
    var reason: EligibilityReasons
    switch markError.code {
    case .absent:
      if policy.trustOnFirstUse {
        do {
          var created: ClockObservation?
          let record = try marks.createFirstMark(readingClocks: {
            let reading = clocks.readForDecision()
            created = reading
            return reading
          })
          guard let first = created else {
            // Another process created the first mark after this one found none: observe it like
            // any existing mark, with the clocks read under the lock (its mark may be later
            // than any clock read before, which is no rollback).
            let transition = try marks.observe(
              resolution: policy.markResolution, readingClocks: clocks.readForDecision)
            return decision(items: items, transition: transition)
          }
          let now = first.wall
          let markRule = policy.evaluate(items, now: now, mark: record.mark)
          let (evaluation, check) = applyingFloor(to: markRule, record: record, now: now)
          return OfflineAccessDecision(
            status: evaluation.status, reasons: evaluation.reasons, now: now,
            deadline: evaluation.deadline, mark: record.mark, previousMark: nil,
            generation: record.generation, items: items, floor: record.floor, floorCheck: check)
        } catch let failure {
          error = failure
          reason = failure.code == .unreadable ? .markUnreadable : .markNotPersisted
        }
      } else {
        reason = .markMissing
      }
    case .unreadable, .insecureStore:
      reason = .markUnreadable
    default:
      reason = .markNotPersisted
    }
    // Judge the other reasons against the stored mark when it can still be read, with the
    // clocks read after it.
    let stored = reason == .markNotPersisted ? try? marks.read() : nil
    let reading = clocks.readForDecision()
    let (now, boot) = (reading.wall, reading.boot)
    var evaluation = policy.evaluate(items, now: now, mark: stored?.mark)
    // The floor's reasons too, from the stored floor carried forward in memory (not written).
    let advanced = stored?.observing(ClockObservation(wall: now, boot: boot))
    var check: BootClockFloorCheck?
    if let advanced {
      (evaluation, check) = applyingFloor(to: evaluation, record: advanced, now: now)
    }
    return OfflineAccessDecision(
      status: .expired, reasons: evaluation.reasons.union(reason), now: now, deadline: nil,
      mark: stored?.mark, previousMark: stored?.mark, generation: stored?.generation,
      items: items, markError: error, floor: advanced?.floor, floorCheck: check)
  }
}
