/// Where a cache's items live: a Sendable backend behind one protocol.
///
/// Every implementation must guarantee (<doc:Rules#Never-delete-on-expiry>, <doc:Rules#Durable-and-private-storage>), and must pass the shared
/// conformance suite `CacheItemStoreConformance` in `OfflineTTLTesting`:
/// 1. **Exact times.** ``item(forKey:)`` returns the `writtenAt` given to
///    ``commit(_:onlyIf:)``, to the nanosecond; it is recorded by the store, never inferred
///    (file modification times are changed and rounded by other tools).
/// 2. **Atomic, durable commits.** When ``commit(_:onlyIf:)`` returns, every change in it survives
///    a crash; a crash at any instant leaves each item old or new, never half of one.
/// 3. **Serialized writers.** Commits are serialized across threads *and processes*; the
///    precondition runs under that exclusion, so a writer can check a generation atomically with
///    its writes.
/// 4. **Cheap summary.** ``summary()`` returns the count and the oldest and newest `writtenAt`
///    without reading any payload, at a cost independent of the number of items (except while
///    an index is rebuilt, which changes no item).
/// 5. **Fail closed, keep the evidence.** An item that cannot be read is
///    ``CacheStoreError/Code/itemUnreadable``; no read path deletes, rewrites or re-stamps an item.
/// 6. **Errors are typed**: every failure is a ``CacheStoreError``.
public protocol CacheItemStore: Sendable {
  /// The count and the oldest and newest `writtenAt` of the stored items.
  ///
  /// - Returns: The summary; ``ItemTimeSummary/empty`` when nothing is stored.
  /// - Throws: ``CacheStoreError``: `itemUnreadable` when an index rebuild meets an unreadable
  ///   item, or an I/O failure.
  /// - Complexity: O(1) in the number of items, except while an index is rebuilt (O(n)).
  func summary() throws(CacheStoreError) -> ItemTimeSummary

  /// One item, or `nil` when none is stored under `key`.
  ///
  /// - Parameter key: The item's key.
  /// - Returns: The item's bytes and `writtenAt`.
  /// - Throws: ``CacheStoreError``: `itemUnreadable` (the item is left alone), or an I/O failure.
  /// - Complexity: O(payload size).
  func item(forKey key: CacheItemKey) throws(CacheStoreError) -> CacheItem?

  /// Every stored key, in ascending byte order.
  ///
  /// - Returns: The keys.
  /// - Throws: ``CacheStoreError`` on an I/O failure.
  /// - Complexity: O(n log n).
  func keys() throws(CacheStoreError) -> [CacheItemKey]

  /// Applies `changes` as one durable commit, if `precondition` (run under the writer exclusion)
  /// returns `true`.
  ///
  /// - Parameters:
  ///   - changes: The writes and deletions; may be empty (then only the precondition runs, under
  ///     the exclusion). To serialize other work with the writers, use ``withWriterLock(_:)``.
  ///   - precondition: Checked after the exclusion is taken and before anything is written.
  /// - Returns: Whether the changes were applied (`false`: the precondition refused, nothing
  ///   was written).
  /// - Throws: ``CacheStoreError``: `writeFailed` (items already committed are intact),
  ///   `lockFailed`, `storeUnusable`.
  /// - Complexity: O(n + k) for k changes; a constant number of durable syncs, not one per item.
  func commit(_ changes: CacheChanges, onlyIf precondition: () -> Bool) throws(CacheStoreError)
    -> Bool

  /// Runs `body` while holding the writer exclusion that serializes ``commit(_:onlyIf:)`` across
  /// threads and processes, and writes nothing.
  ///
  /// An online sign-in resets the clock mark inside it, so that no commit of an older session
  /// interleaves with the reset (a commit checks the generation under the same exclusion).
  ///
  /// - Parameter body: The work to serialize with the writers; it must not call back into this
  ///   store's ``commit(_:onlyIf:)`` or ``withWriterLock(_:)`` (the exclusion is not reentrant).
  /// - Returns: What `body` returned.
  /// - Throws: ``StoreError``: `lockFailed`, or `storeUnusable` when the store cannot be opened
  ///   or created; `body` has not run then.
  func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result
}

extension CacheItemStore {
  /// Applies `changes` as one durable commit, unconditionally.
  ///
  /// - Parameter changes: The writes and deletions.
  /// - Throws: As ``commit(_:onlyIf:)``.
  public func commit(_ changes: CacheChanges) throws(CacheStoreError) {
    _ = try commit(changes, onlyIf: { true })
  }
}
