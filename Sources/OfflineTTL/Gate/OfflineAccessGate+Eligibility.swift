extension OfflineAccessGate {
  /// Decides whether the cache may be used offline now (<doc:Rules#Eligibility-rule>,
  /// <doc:Rules#Clock-mark>, <doc:Rules#Fail-closed>).
  ///
  /// Summarizes the items (count, oldest, newest: no payload is read); an empty cache is
  /// `unavailable`, and then the stored mark is read first and the clocks after it, and nothing
  /// is written. Otherwise the clocks are read *under the mark store's lock* and observed
  /// through it, durably, before `fresh` can be returned, and the rules (``OfflinePolicySet``:
  /// the mark rule against the mark as it was before this observation, then the boot-clock
  /// floor) judge the same inputs. Reading the clocks under the lock, after the summary, means a
  /// concurrent process's newer mark or newer items can never look like a rollback, a
  /// future-dated item or a boot clock going backward.
  ///
  /// Never throws: a store failure is an `expired` decision carrying the typed error, with
  /// reason `mark_missing` (no mark while items exist; unless ``EligibilityPolicy/trustOnFirstUse``
  /// lets the gate create it), `mark_unreadable` (its bytes are left alone),
  /// `mark_not_persisted` (the advanced mark could not be made durable; the old one is intact)
  /// or `item_unreadable` (nothing is deleted). With the floor on and no boot clock now or at the
  /// last sign-in, `boot_clock_unavailable`; with a configured TPM that cannot be read or is not
  /// the recorded one, `tpm_unavailable` or `tpm_changed`. Every other reason that applies is
  /// added too. While a server anchor holds
  /// (``beginOnlineSession(serverTime:uncertainty:)``), the rules judge from trusted time
  /// (``TrustedTimeRule``).
  ///
  /// A store whose item set is bound to the mark record (a sealed ``DirectoryCacheStore``)
  /// summarizes without reading the record; the binding is confirmed against the record observed
  /// under the lock, and anything that does not confirm it is judged by the store's own
  /// ``CacheItemStore/summary()`` (``CacheItemStore/summaryIfSettledDeferringBinding()``).
  ///
  /// While an online sign-in is between its commit point and its end (or was killed there), the
  /// item set depends on the mark's generation: the mark is observed first, the set of that
  /// generation summarized, and the generation read again; when a newer sign-in committed
  /// meanwhile this repeats (three attempts, then a refusal with `item_unreadable`).
  ///
  /// Blocks the calling thread on `flock` and, when the mark rises, on `fdatasync` (file
  /// stores); from Swift concurrency use ``checkEligibilityAsync()``. Every store lock is waited
  /// for at most the store's lock timeout (`lockTimeout`, 30 seconds by default): behind a
  /// holder that never lets go (stopped with `SIGSTOP`, hung, or holding it on purpose) the
  /// decision is `expired` carrying ``StoreError/Code/lockTimedOut``. The check's own rereads
  /// and retries skip a lock that timed out, so a check waits for each held lock once, or twice
  /// for the mark lock of a sealed store during a sign-in (its items read their binding under
  /// that lock too).
  ///
  /// - Returns: The decision.
  /// - Complexity: O(1) in the number of items with ``DirectoryCacheStore`` (its index), plus
  ///   one durable mark write when the mark rises by at least ``EligibilityPolicy/markResolution``.
  public func checkEligibility() -> OfflineAccessDecision {
    if let sealingConflict {
      // Neither store is read: the pair cannot be judged (``sealingConflict``).
      return decision(
        items: .failure(sealingConflict),
        mark: .failed(sealingConflict, stored: nil, clocks.readForDecision()))
    }
    // A sealed store's key is read once for the whole check (the summary and the observation),
    // and file stores over one directory check their shared change watch once for it. Stores
    // known to load no key skip the key scope.
    guard mayLoadSealingKeys else {
      return StoreCheckScope.run { () -> OfflineAccessDecision in checkEligibilityInKeyScope() }
    }
    return SealingKeyScope.run { () -> OfflineAccessDecision in
      StoreCheckScope.run { () -> OfflineAccessDecision in checkEligibilityInKeyScope() }
    }
  }

  private func checkEligibilityInKeyScope() -> OfflineAccessDecision {
    for attempt in 0..<3 {
      let settled = Result { () throws(StoreError) in
        try cache.summaryIfSettledDeferringBinding()
      }
      switch settled {
      case .success((let summary, nil)?):
        return decision(items: summary)
      case .success((let summary, let required?)?):
        // A set bound to the mark record (sealed): confirmed against the record observed under
        // the lock; anything else (a failure, another generation or store) is judged by the
        // store's own summary, which reads the record itself. Never a first mark: the set needs
        // an existing one. A confirmed set is judged straight from the transition, as an
        // unsealed set is (`decision(items:)`: the same decision, no ``MarkOutcome`` built).
        let mark: MarkOutcome
        do {
          let transition = try marks.observe(
            resolution: policy.markResolution, readingClocks: { clocks.readForDecision() })
          if required.isConfirmed(by: transition) {
            return OfflineAccessDecision(policy: policy, transition: transition, items: summary)
          }
          mark = .observed(transition)
        } catch {
          mark = observationFailed(error, mayTrustOnFirstUse: false)
        }
        // A sign-in committed between the summary and the observation: its items may be dated
        // after the clocks just read, so judge its set from the start (summary, then the clocks
        // under the lock) rather than pair it with this reading.
        if case .observed(let transition) = mark, transition.sealedStoreID == required.storeID,
          transition.previous.generation != required.generation, attempt < 2
        {
          continue
        }
        // A mark lock held past its limit: the store's own summary would wait for it again to
        // check the binding, so the set is left unchecked (refused with the mark's error).
        if let error = mark.error, error.code == .lockTimedOut {
          return decision(items: .failure(error), mark: mark)
        }
        return decision(items: Result { () throws(StoreError) in try cache.summary() }, mark: mark)
      case .failure(let error):
        // Unreadable items: the clock is still observed (so the time is seen), never a first mark.
        let mark = observed(mayTrustOnFirstUse: false)
        // A sign-in may have cured the items meanwhile (it created the sealing key, or replaced
        // the set): a summary that now succeeds is judged from the start, so the failure seen
        // before that sign-in is never paired with the mark it wrote.
        // (Not after a lock wait that timed out: it would wait as long again, and refuse.)
        if attempt < 2, error.code != .lockTimedOut,
          case .success = Result(catching: cache.summaryIfSettledDeferringBinding)
        {
          continue
        }
        return decision(items: .failure(error), mark: mark)
      case .success(nil):
        let mark = observed(mayTrustOnFirstUse: policy.trustOnFirstUse)
        guard let generation = mark.generationObserved else {
          // No generation to pair the items with: judge the mark failure with the live set. The
          // summary waits for a sign-in in progress (the first one, when no mark was found); a
          // mark that exists after it was written by that sign-in, after this observation:
          // judge again from the start rather than pair "no mark" with the new items.
          let items = Result { () throws(StoreError) in try cache.summary() }
          // (Not after a mark lock wait that timed out: the read would wait as long again.)
          if attempt < 2, mark.error?.code != .lockTimedOut, (try? marks.read()) != nil {
            continue
          }
          return decision(items: items, mark: mark)
        }
        let items = Result { () throws(StoreError) in
          try cache.summary(forGeneration: generation)
        }
        // A sign-in that committed meanwhile may have replaced the set of `generation` (which a
        // sealed store then no longer has): judge the new one.
        if (try? marks.read().generation) != generation { continue }
        return decision(items: items, mark: mark)
      }
    }
    return decision(
      items: .failure(
        StoreError(
          code: .storeUnusable,
          message: "online sign-ins kept replacing the item set during this check; try again")),
      mark: observed(mayTrustOnFirstUse: false))
  }

  /// The one decision: the rules (``OfflinePolicySet``) over the inputs of `items` and `mark`.
  private func decision(items: Result<ItemTimeSummary, StoreError>, mark: MarkOutcome)
    -> OfflineAccessDecision
  {
    OfflineAccessDecision(policy: policy, mark: mark, items: items)
  }

  /// The decision for a readable item set: nothing cached leaves the mark unobserved; otherwise
  /// it is observed under the lock (or created on first use when the policy allows). An
  /// observation that succeeds is judged straight from the mark store's transition (the
  /// repeated check's path: no ``MarkOutcome`` is built), the same decision as
  /// `decision(items:mark:)` with `.observed(transition)`.
  private func decision(items: ItemTimeSummary) -> OfflineAccessDecision {
    guard items.count != 0 else { return decision(items: .success(items), mark: unobserved()) }
    let transition: ClockMarkTransition
    do {
      transition = try marks.observe(
        resolution: policy.markResolution, readingClocks: { clocks.readForDecision() })
    } catch {
      return decision(
        items: .success(items),
        mark: observationFailed(error, mayTrustOnFirstUse: policy.trustOnFirstUse))
    }
    return OfflineAccessDecision(policy: policy, transition: transition, items: items)
  }

  /// Whether the cache is fresh now and stays fresh by age for at least `minimum` more, judged
  /// from the decision's effective time (``OfflineAccessDecision/isFresh(forAtLeast:)``).
  ///
  /// - Parameter minimum: How long the cache must stay fresh.
  /// - Returns: The answer; the full decision is ``checkEligibility()``'s.
  /// - Complexity: As ``checkEligibility()``.
  public func isFresh(forAtLeast minimum: Duration) -> Bool {
    checkEligibility().isFresh(forAtLeast: minimum)
  }

  /// Nothing cached: the stored mark read first (nothing written), then the clocks.
  private func unobserved() -> MarkOutcome {
    let record = try? marks.read()
    return .notObserved(record, clocks.readForDecision())
  }

  /// The observation under the mark store's lock; on failure, trust on first use when the
  /// policy allows and no mark exists, else the failure with the clocks read after it.
  private func observed(mayTrustOnFirstUse: Bool) -> MarkOutcome {
    do {
      return .observed(
        try marks.observe(
          resolution: policy.markResolution, readingClocks: { clocks.readForDecision() }))
    } catch {
      return observationFailed(error, mayTrustOnFirstUse: mayTrustOnFirstUse)
    }
  }

  /// After a failed observation: trust on first use when the policy allows and no mark exists,
  /// else the failure with the clocks read after it.
  private func observationFailed(_ error: StoreError, mayTrustOnFirstUse: Bool) -> MarkOutcome {
    if error.code == .absent, mayTrustOnFirstUse { return trustOnFirstUse() }
    return failed(error)
  }

  /// The trust-on-first-use step (off by default, ``EligibilityPolicy/trustOnFirstUse``): creates
  /// the first mark (generation 0) at the clocks read under the lock. When another process
  /// created it first, that mark is observed like any existing one (clocks read under the lock
  /// again: its mark can be later than any reading taken before, which is no rollback).
  private func trustOnFirstUse() -> MarkOutcome {
    do {
      var created: ClockObservation?
      let record = try marks.createFirstMark(readingClocks: {
        let reading = clocks.readForDecision()
        created = reading
        return reading
      })
      if let created { return .createdFirst(record, created) }
      return .observed(
        try marks.observe(
          resolution: policy.markResolution, readingClocks: { clocks.readForDecision() }))
    } catch {
      return failed(error)
    }
  }

  /// A mark store failure: when the record can still be read and is evidence of this machine
  /// (a failed write), it is read first so the other reasons are judged against it; the clocks
  /// are read after. A record of another machine (`store_from_another_machine`) is not read
  /// again: its floor and trusted time belong to that machine and are not judged here, so the
  /// decision's only reason is `mark_unreadable` (<doc:Rules#One-user-one-device>). Nor is a
  /// record whose lock another holder kept past the store's limit (`lock_timed_out`): the read
  /// would wait as long again, and the answer is `expired` either way.
  private func failed(_ error: StoreError) -> MarkOutcome {
    let stored: ClockMarkRecord?
    switch error.code {
    case .absent, .unreadable, .storeFromAnotherMachine, .machineIDUnreadable, .lockTimedOut:
      stored = nil
    default: stored = try? marks.read()
    }
    return .failed(error, stored: stored, clocks.readForDecision())
  }
}
