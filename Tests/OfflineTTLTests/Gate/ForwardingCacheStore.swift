import Foundation
import OfflineTTL

/// A cache store for tests that forwards every requirement of ``CacheItemStore`` to `base`: a
/// test store conforms and writes only the calls it hooks. This extension's forwarding is more
/// specific than `CacheItemStore`'s own defaults, so no call falls back to a default that
/// `base` overrides (a store that forwarded only some calls used to answer `summaryIfSettled()`
/// with the default's plain summary instead of its base's).
protocol ForwardingCacheStore: CacheItemStore {
  /// The store every call goes to.
  var base: any CacheItemStore { get }
}

extension ForwardingCacheStore {
  func summary() throws(CacheStoreError) -> ItemTimeSummary { try base.summary() }

  func item(forKey key: CacheItemKey) throws(CacheStoreError) -> CacheItem? {
    try base.item(forKey: key)
  }

  func keys() throws(CacheStoreError) -> [CacheItemKey] { try base.keys() }

  func commit(preparing prepare: () -> CacheChanges?) throws(CacheStoreError) -> Bool {
    try base.commit(preparing: prepare)
  }

  func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
    try base.withWriterLock(body)
  }

  func commitSignIn(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    try base.commitSignIn(
      preparing: prepare, storedGeneration: storedGeneration, commitPoint: commitPoint)
  }

  func summaryIfSettled() throws(StoreError) -> ItemTimeSummary? { try base.summaryIfSettled() }

  func summaryIfSettledDeferringBinding() throws(StoreError)
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
  {
    try base.summaryIfSettledDeferringBinding()
  }

  func summary(forGeneration generation: UInt64) throws(StoreError) -> ItemTimeSummary {
    try base.summary(forGeneration: generation)
  }

  func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError) -> CacheItem? {
    try base.item(forKey: key, generation: generation)
  }

  func streamItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    try base.streamItem(
      forKey: key, generation: generation, chunkSize: chunkSize, accept: accept, chunk: chunk)
  }

  func keys(forGeneration generation: UInt64) throws(StoreError) -> [CacheItemKey] {
    try base.keys(forGeneration: generation)
  }
}
