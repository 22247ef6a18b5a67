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
}

extension OfflineAccessGate {
  /// Reads every item, header, payload and checksum, and checks each against `decision` as an
  /// ``OfflineCacheReader`` would serve it (its own `writtenAt` not after the decision's time or
  /// newest item, not before its oldest item, within the max age). `status --verify` uses it;
  /// the default `status` stays O(1).
  ///
  /// Nothing is written or deleted; no lock is held across items.
  ///
  /// - Parameter decision: The decision to check against (usually just made).
  /// - Returns: The number of items checked and those that disagree.
  /// - Complexity: O(n log n + total payload size).
  public func verifyItems(against decision: OfflineAccessDecision) -> ItemVerification {
    let keys: [CacheItemKey]
    do {
      keys = try cache.keys()
    } catch {
      return ItemVerification(
        checked: 0,
        disagreeing: [ItemDisagreement(key: nil, code: "\(error.code)", reason: error.reason)])
    }
    let reader = OfflineCacheReader(gate: self, decision: decision)
    let now = decision.floorCheck?.effectiveNow ?? decision.now
    var disagreeing: [ItemDisagreement] = []
    for key in keys {
      do {
        guard let item = try cache.item(forKey: key) else {
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
    return ItemVerification(checked: keys.count, disagreeing: disagreeing)
  }
}
