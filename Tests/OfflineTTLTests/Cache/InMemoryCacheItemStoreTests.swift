import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct InMemoryCacheItemStoreTests {
  @Test func passesTheConformanceSuite() throws {
    try CacheItemStoreConformance.check { InMemoryCacheStore() }
  }

  @Test func unreadableItemFailsSummaryAndReadUntilReplaced() throws {
    let store = InMemoryCacheStore()
    let key = CacheItemKey("k")
    var changes = CacheChanges()
    changes.write(key, Data("v".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 5))
    try store.commit(changes)
    store.makeUnreadable(key)
    #expect(throws: CacheStoreError.self) { try store.summary() }
    #expect(throws: CacheStoreError.self) { try store.item(forKey: key) }
    try store.commit(changes)
    #expect(try store.summary().count == 1)
  }

  @Test func injectedCommitFailureWritesNothing() throws {
    let store = InMemoryCacheStore()
    store.failNextCommit(with: CacheStoreError(code: .writeFailed, reason: "disk full"))
    var changes = CacheChanges()
    changes.write(CacheItemKey("k"), Data(), writtenAt: .min)
    #expect(throws: CacheStoreError.self) { try store.commit(changes) }
    #expect(try store.summary() == .empty)
    try store.commit(changes)
    #expect(store.commitCount == 1)
  }
}
