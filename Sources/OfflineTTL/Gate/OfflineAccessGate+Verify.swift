/// One item that disagrees with a decision, found by
/// ``OfflineAccessGate/verifyItems(against:)``.
public struct ItemDisagreement: Sendable, Hashable, CustomStringConvertible {
  /// The item's key (`nil` when the items could not even be listed).
  public let key: CacheItemKey?
  /// The refusal a read of this item would give: `item_unreadable`, `too_old`, or the store's
  /// own code (`not_a_regular_file`, `insecure_store`, …).
  public let code: String
  /// A sentence naming the item and the cause (its own `writtenAt` when that is the cause).
  public let reason: String

  /// `"<key>: <code>: <reason>"`.
  public var description: String {
    (key.map { "\($0.rawValue): " } ?? "") + "\(code): \(reason)"
  }
}

/// What ``OfflineAccessGate/verifyItems(against:)`` found.
public struct ItemVerification: Sendable, Hashable {
  /// How many keys were listed and checked.
  public let checked: Int
  /// The items that disagree with the decision, by key.
  public let disagreeing: [ItemDisagreement]
  /// The decision the items were checked against: the one given, or, when an online sign-in
  /// committed during the verify (its set replaced the one the given decision judged), that
  /// sign-in's set judged as a new check judges it (``OfflineAccessGate/checkEligibility()``).
  /// Report this decision beside the verification.
  public let decision: OfflineAccessDecision
}

extension OfflineAccessGate {
  /// Reads every item, header, payload and checksum, and checks each against `decision` as an
  /// ``OfflineCacheReader`` would serve it (its own `writtenAt` not after the decision's time or
  /// newest item, not before its oldest item, within the max age). `status --verify` uses it;
  /// the default `status` stays O(1).
  ///
  /// The items read are the set `decision` judged (its generation; a sealed store's, by the
  /// record the decision observed), as a reader reads them. When an online sign-in commits
  /// during the verify, that set is gone: the verify starts over with the new set's decision
  /// (``ItemVerification/decision``), at most ``OfflineCacheReader/maximumAttempts`` times, so a
  /// healthy store is never reported as disagreeing because a newer sign-in's items were checked
  /// against an older decision.
  ///
  /// Nothing is written or deleted; no lock is held across items.
  ///
  /// - Parameter decision: The decision to check against (usually just made).
  /// - Returns: The number of items checked, those that disagree, and the decision they were
  ///   checked against. When sign-ins kept committing, the last pass's result with one more
  ///   disagreement (no key, `store_unusable`) saying so.
  /// - Complexity: O(n log n + total payload size) per pass.
  public func verifyItems(against decision: OfflineAccessDecision) -> ItemVerification {
    SealingKeyScope.run { () -> ItemVerification in
      var decision = decision
      var last: ItemVerification?
      for _ in 0..<OfflineCacheReader.maximumAttempts {
        let reader = OfflineCacheReader(gate: self, decision: decision)
        let pass = verifyPass(decision, reader: reader)
        guard !reader.isCurrent(decision) else { return pass }
        last = pass
        decision = checkEligibility()
      }
      let kept = OfflineCacheReader.keptReplacing
      return ItemVerification(
        checked: last?.checked ?? 0,
        disagreeing: (last?.disagreeing ?? [])
          + [ItemDisagreement(key: nil, code: "store_unusable", reason: kept.reason)],
        decision: decision)
    }
  }

  /// One pass of ``verifyItems(against:)`` over the set `decision` judged.
  private func verifyPass(_ decision: OfflineAccessDecision, reader: OfflineCacheReader)
    -> ItemVerification
  {
    let keys: [CacheItemKey]
    do {
      keys = try OfflineCacheReader.keys(judgedBy: decision, in: cache)
    } catch {
      return ItemVerification(
        checked: 0,
        disagreeing: [ItemDisagreement(key: nil, code: "\(error.code)", reason: error.reason)],
        decision: decision)
    }
    let now = decision.floorCheck?.effectiveNow ?? decision.now
    var disagreeing: [ItemDisagreement] = []
    for key in keys {
      do {
        guard let item = try OfflineCacheReader.item(key, judgedBy: decision, in: cache) else {
          disagreeing.append(
            ItemDisagreement(key: key, code: "item_unreadable", reason: "vanished while listed"))
          continue
        }
        do throws(OfflineReadError) {
          try reader.checkServed(item, now: now)
        } catch {
          // The reason itself (`too_old`, `item_unreadable`), not the reader's main code.
          disagreeing.append(
            ItemDisagreement(key: key, code: "\(error.reasons)", reason: error.reason))
        }
      } catch {
        disagreeing.append(ItemDisagreement(key: key, code: "\(error.code)", reason: error.reason))
      }
    }
    return ItemVerification(checked: keys.count, disagreeing: disagreeing, decision: decision)
  }
}
