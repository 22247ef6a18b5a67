import Foundation
import OfflineTTL
import Synchronization

/// A `CacheItemStore` in memory, for tests of code that uses a cache (the gate, the command
/// line). It keeps exact `writtenAt` values, serializes commits across threads (not processes;
/// nothing here is durable), and can be told to treat an item as unreadable or to fail the next
/// commit. It passes `CacheItemStoreConformance` (in the `OfflineTTLTesting` product).
public final class InMemoryCacheStore: CacheItemStore {
  struct State {
    var items: [CacheItemKey: CacheItem] = [:]
    var unreadable: Set<CacheItemKey> = []
    var commitFailures: [StoreError] = []
    var commits = 0
  }

  private let state = Mutex(State())
  // Held for a whole commit (precondition included), so commits serialize as the protocol asks,
  // while reads only take `state` briefly.
  private let writer = Mutex(())

  /// Creates an empty store.
  public init() {}

  /// How many commits applied changes.
  public var commitCount: Int { state.withLock { $0.commits } }

  /// Every stored item, by key (test inspection; not part of the protocol).
  public var allItems: [CacheItemKey: CacheItem] { state.withLock { $0.items } }

  /// Makes `key` unreadable (as a corrupt file would be): ``summary()`` and ``item(forKey:)``
  /// throw `item_unreadable` while it is stored, until a commit replaces or deletes it.
  ///
  /// - Parameter key: The item's key.
  public func makeUnreadable(_ key: CacheItemKey) {
    state.withLock { _ = $0.unreadable.insert(key) }
  }

  /// Makes the next commit fail with `error`, writing nothing.
  ///
  /// - Parameter error: The error to throw.
  public func failNextCommit(with error: StoreError) {
    state.withLock { $0.commitFailures.append(error) }
  }

  /// See `CacheItemStore.summary()`.
  ///
  /// - Complexity: O(n): this double computes the bounds on each call.
  public func summary() throws(StoreError) -> ItemTimeSummary {
    try state.withLock { state throws(StoreError) in
      if let key = state.unreadable.first(where: { state.items[$0] != nil }) {
        throw Self.unreadable(key)
      }
      return ItemTimeSummary(writtenAt: state.items.values.lazy.map(\.writtenAt))
    }
  }

  /// See `CacheItemStore.item(forKey:)`.
  public func item(forKey key: CacheItemKey) throws(StoreError) -> CacheItem? {
    try state.withLock { state throws(StoreError) in
      guard let item = state.items[key] else { return nil }
      if state.unreadable.contains(key) { throw Self.unreadable(key) }
      return item
    }
  }

  /// See `CacheItemStore.keys()`.
  public func keys() throws(StoreError) -> [CacheItemKey] {
    state.withLock { $0.items.keys.sorted() }
  }

  /// See `CacheItemStore.commit(preparing:)`.
  public func commit(preparing prepare: () -> CacheChanges?) throws(StoreError) -> Bool {
    try writer.withLock { _ throws(StoreError) -> Bool in
      let failure = state.withLock { state in
        state.commitFailures.isEmpty ? nil : state.commitFailures.removeFirst()
      }
      if let failure { throw failure }
      guard let changes = prepare() else { return false }
      if changes.isEmpty { return true }
      state.withLock { state in
        if changes.removesAll {
          state.items.removeAll()
          state.unreadable.removeAll()
        }
        for (key, change) in changes.entries {
          state.unreadable.remove(key)
          if let change {
            state.items[key] = CacheItem(
              key: key, payload: change.payload, writtenAt: change.writtenAt)
          } else {
            state.items[key] = nil
          }
        }
        state.commits += 1
      }
      return true
    }
  }

  /// Runs `body` holding the same exclusion as `commit(preparing:)`, writing nothing. An injected
  /// commit failure is not consumed.
  ///
  /// - Parameter body: The work to serialize with the writers.
  /// - Returns: What `body` returned.
  public func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
    writer.withLock { _ in body() }
  }

  private static func unreadable(_ key: CacheItemKey) -> StoreError {
    StoreError(code: .itemUnreadable, key: key, message: "item \(key) is unreadable (injected)")
  }
}

/// The earlier name of ``InMemoryCacheStore`` (its siblings are `DirectoryCacheStore` and
/// `SecretServiceCacheStore`); it keeps working.
@available(*, deprecated, renamed: "InMemoryCacheStore")
public typealias InMemoryCacheItemStore = InMemoryCacheStore
