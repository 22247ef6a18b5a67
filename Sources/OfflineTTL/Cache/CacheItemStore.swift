/// Where a cache's items live: a Sendable backend behind one protocol.
///
/// Every implementation must guarantee (<doc:Rules#Never-delete-on-expiry>, <doc:Rules#Durable-and-private-storage>), and must pass the shared
/// conformance suite `CacheItemStoreConformance` in `OfflineTTLTesting`:
/// 1. **Exact times.** ``item(forKey:)`` returns the `writtenAt` given to
///    ``commit(preparing:)``, to the nanosecond; it is recorded by the store, never inferred
///    (file modification times are changed and rounded by other tools).
/// 2. **Atomic, durable commits.** When ``commit(preparing:)`` returns, every change in it survives
///    a crash; a crash at any instant leaves each item old or new, never half of one.
/// 3. **Serialized writers.** Commits are serialized across threads *and processes*; the
///    changes are prepared under that exclusion (``commit(preparing:)``), so a writer can check a
///    generation atomically with its writes and stamps its items after every writer it waited
///    for.
/// 4. **Cheap summary.** ``summary()`` returns the count and the oldest and newest `writtenAt`
///    without reading any payload, at a cost independent of the number of items (except while
///    an index is rebuilt, which changes no item).
/// 5. **Fail closed, keep the evidence.** An item that cannot be read is
///    `item_unreadable` (``StoreError``); no read path deletes, rewrites or re-stamps an item.
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

  /// Applies the changes that `prepare` returns, as one durable commit; `prepare` runs under the
  /// writer exclusion, so whatever it reads (the stored generation, the wall clock that stamps
  /// the items) is read after every earlier commit and sign-in finished.
  ///
  /// - Parameter prepare: Called exactly once, after the exclusion is taken and before anything
  ///   is written: the changes to apply (may be empty: then nothing is written), or `nil` to
  ///   refuse (nothing is written). To serialize other work with the writers, use
  ///   ``withWriterLock(_:)``.
  /// - Returns: Whether the changes were applied (`false`: `prepare` refused).
  /// - Throws: ``CacheStoreError``: `writeFailed` (items already committed are intact),
  ///   `lockFailed`, `storeUnusable`.
  /// - Complexity: O(n + k) for k changes; a constant number of durable syncs, not one per item.
  func commit(preparing prepare: () -> CacheChanges?) throws(CacheStoreError) -> Bool

  /// Runs `body` while holding the writer exclusion that serializes ``commit(preparing:)`` across
  /// threads and processes, and writes nothing.
  ///
  /// An online sign-in resets the clock mark inside it, so that no commit of an older session
  /// interleaves with the reset (a commit checks the generation under the same exclusion).
  ///
  /// - Parameter body: The work to serialize with the writers; it must not call back into this
  ///   store's ``commit(preparing:)`` or ``withWriterLock(_:)`` (the exclusion is not reentrant).
  /// - Returns: What `body` returned.
  /// - Throws: ``StoreError``: `lockFailed`, or `storeUnusable` when the store cannot be opened
  ///   or created; `body` has not run then.
  func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result

  /// Applies an online sign-in's changes together with its commit point, all or nothing (the
  /// protocol: `docs/sign-in-protocol.md`).
  ///
  /// Under the writer exclusion, calls `storedGeneration` once (the mark record's generation
  /// now, `nil` when it is absent or unreadable, thrown when it could not be looked at:
  /// ``ClockMarkStore/generationForSignIn()``), then `prepare` once (the changes, stamped by
  /// the caller under the exclusion, so never earlier than a sign-in it waited for), stages the
  /// changes so that none is visible yet, then calls `commitPoint` (the mark reset, which writes
  /// a generation at least `storedGeneration() + 1`), and makes the changes visible. A store
  /// that stages (the directory store) guarantees that a crash or a failure at any point leaves
  /// the state before (when `commitPoint` did not return `true`) or after; the default
  /// implementation, for stores that cannot stage, calls `commitPoint` and then
  /// ``commit(preparing:)``'s writes, so a crash between them can leave the new generation with
  /// old items (each store documents what it guarantees).
  ///
  /// - Parameters:
  ///   - prepare: Returns the sign-in's writes and deletions; called once, under the exclusion,
  ///     after `storedGeneration` (empty changes: only the commit point runs, after any earlier
  ///     staging was reclaimed).
  ///   - storedGeneration: Reads the stored generation; called once, under the exclusion. What
  ///     it throws ends the sign-in there, with nothing prepared, written or removed, and is
  ///     rethrown.
  ///   - commitPoint: Makes the sign-in visible (resets the mark); `false` when it failed.
  /// - Returns: What `commitPoint` returned.
  /// - Throws: ``StoreError``: `writeFailed` (before the commit point: nothing of the sign-in is
  ///   visible; after it: the sign-in is committed and a later sign-in finishes it), `lockFailed`,
  ///   `lockTimedOut`, `storeUnusable`, or what `storedGeneration` threw.
  /// - Complexity: O(n + k) for k changes; a constant number of durable syncs.
  func commitSignIn(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool

  /// ``summary()`` when the item set does not depend on which generation the mark record holds
  /// (no sign-in is between its commit point and its end); `nil` when it does (ask
  /// ``summary(forGeneration:)`` with the generation the mark was observed at).
  ///
  /// - Returns: The summary, or `nil`.
  /// - Throws: As ``summary()``.
  /// - Complexity: As ``summary()``.
  func summaryIfSettled() throws(StoreError) -> ItemTimeSummary?

  /// ``summaryIfSettled()`` for a caller that observes the mark record under its lock next (the
  /// gate's check): a store whose item set is bound to the mark record (a sealed
  /// ``DirectoryCacheStore``, whose index names the record's generation and store id) may skip
  /// its own read of the record and return the binding as `requiredMark`. The caller must then
  /// confirm it against the record it observed (``MarkBinding/isConfirmed(by:)``) and, when it
  /// cannot, ask ``summary()``, which checks the binding itself.
  ///
  /// - Returns: The summary and the binding it still needs (`nil`: none), or `nil` as
  ///   ``summaryIfSettled()``.
  /// - Throws: As ``summaryIfSettled()``, except the failures of reading the mark record.
  /// - Complexity: As ``summaryIfSettled()``, without the mark read.
  func summaryIfSettledDeferringBinding() throws(StoreError)
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?

  /// The summary of the item set that the mark record's generation `generation` committed;
  /// writes nothing.
  ///
  /// - Parameter generation: The generation the mark record was observed at.
  /// - Returns: The summary.
  /// - Throws: As ``summary()``.
  /// - Complexity: O(n) while a sign-in's staging exists, else as ``summary()``.
  func summary(forGeneration generation: UInt64) throws(StoreError) -> ItemTimeSummary

  /// One item of the set that generation `generation` committed, or `nil`.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - generation: The generation the reader's decision was made at.
  /// - Returns: The item's bytes and `writtenAt`.
  /// - Throws: As ``item(forKey:)``.
  /// - Complexity: O(payload size), plus O(n) while a sign-in's staging exists.
  func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError) -> CacheItem?

  /// One item streamed through a fixed buffer: the item's header is handed to `accept` before
  /// any byte, and the bytes go to `chunk` only after the whole payload passed its checks
  /// (``DirectoryCacheStore`` reads it twice: once to verify its CRC-32, once to serve it).
  ///
  /// The default implementation, for stores that keep each payload whole (a sealed item is one
  /// authenticated blob, as are the in-memory and keyring stores), reads the item with
  /// ``item(forKey:generation:)`` or ``item(forKey:)`` and hands its bytes out in chunks.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - generation: The generation the reader's decision was made at, or `nil` for the live set.
  ///   - chunkSize: The buffer's size in bytes (at least 1; smaller values count as 1). Every
  ///     chunk but the last holds exactly `chunkSize` bytes, so a multiple of 3 keeps base64
  ///     output of consecutive chunks concatenable.
  ///   - accept: Called once with the item's key, `writtenAt` and size before anything is
  ///     verified or served; throwing refuses the item and nothing is handed out.
  ///   - chunk: Called with consecutive pieces of the payload; the buffer is valid only during
  ///     the call and is reused.
  /// - Returns: The item's header, or `nil` when no item has that key (`accept` not called).
  /// - Throws: ``StoreError`` (`item_unreadable` for a bad header, size or checksum: then
  ///   `chunk` was never called; also when the bytes changed while they were served, after
  ///   some chunks), or whatever `accept` or `chunk` threw, unchanged.
  /// - Complexity: O(payload size) time; O(`chunkSize`) memory for a streaming store.
  func streamItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader?

  /// Every key of the set that generation `generation` committed, in ascending byte order.
  ///
  /// - Parameter generation: The generation the reader's decision was made at.
  /// - Returns: The keys.
  /// - Throws: As ``keys()``.
  /// - Complexity: O(n log n).
  func keys(forGeneration generation: UInt64) throws(StoreError) -> [CacheItemKey]
}

extension CacheItemStore {
  /// The default for stores that cannot stage a sign-in: under the writer exclusion, the
  /// changes are prepared, the commit point runs, then the changes are written in the same
  /// exclusion.
  public func commitSignIn(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    var committed = false
    var generationError: StoreError?
    _ = try commit(preparing: { () -> CacheChanges? in
      do throws(StoreError) {
        _ = try storedGeneration()
      } catch {
        generationError = error
        return nil
      }
      let changes = prepare()
      committed = commitPoint()
      return committed ? changes : nil
    })
    if let generationError { throw generationError }
    return committed
  }

  /// The default: ``summary()`` (the store's set does not depend on the generation).
  public func summaryIfSettled() throws(StoreError) -> ItemTimeSummary? { try summary() }

  /// The default: ``summaryIfSettled()``, with no binding left to the caller.
  public func summaryIfSettledDeferringBinding() throws(StoreError)
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
  {
    try summaryIfSettled().map { ($0, nil) }
  }

  /// The default: ``summary()``.
  public func summary(forGeneration generation: UInt64) throws(StoreError) -> ItemTimeSummary {
    try summary()
  }

  /// The default: ``item(forKey:)``.
  public func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError)
    -> CacheItem?
  {
    try item(forKey: key)
  }

  /// The default: ``keys()``.
  public func keys(forGeneration generation: UInt64) throws(StoreError) -> [CacheItemKey] {
    try keys()
  }
}

extension CacheItemStore {
  /// Applies `changes` as one durable commit, if `precondition` (run under the writer exclusion)
  /// returns `true`: ``commit(preparing:)`` with changes made before the exclusion was taken.
  ///
  /// - Parameters:
  ///   - changes: The writes and deletions; may be empty (then only the precondition runs, under
  ///     the exclusion).
  ///   - precondition: Checked after the exclusion is taken and before anything is written.
  /// - Returns: Whether the changes were applied (`false`: the precondition refused, nothing
  ///   was written).
  /// - Throws: As ``commit(preparing:)``.
  /// - Complexity: As ``commit(preparing:)``.
  public func commit(_ changes: CacheChanges, onlyIf precondition: () -> Bool)
    throws(CacheStoreError) -> Bool
  {
    try commit(preparing: { () -> CacheChanges? in precondition() ? changes : nil })
  }

  /// Applies `changes` as one durable commit, unconditionally.
  ///
  /// - Parameter changes: The writes and deletions.
  /// - Throws: As ``commit(preparing:)``.
  public func commit(_ changes: CacheChanges) throws(CacheStoreError) {
    _ = try commit(preparing: { changes })
  }

  /// ``commitSignIn(preparing:storedGeneration:commitPoint:)`` with changes made before the
  /// exclusion was taken (a reset that writes no item, or changes with fixed stamps).
  ///
  /// - Parameters:
  ///   - changes: The sign-in's writes and deletions.
  ///   - storedGeneration: Reads the stored generation; called once, under the exclusion.
  ///   - commitPoint: Makes the sign-in visible (resets the mark); `false` when it failed.
  /// - Returns: What `commitPoint` returned.
  /// - Throws: As ``commitSignIn(preparing:storedGeneration:commitPoint:)``.
  public func commitSignIn(
    _ changes: CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    try commitSignIn(
      preparing: { changes }, storedGeneration: storedGeneration, commitPoint: commitPoint)
  }
}

/// The mark record an item set belongs to: a sealed store's index is bound to the record's
/// generation and store id (the id every sealed slot of the record carries).
public struct MarkBinding: Sendable, Hashable {
  /// The record's generation the set was committed under.
  public let generation: UInt64
  /// The 8-byte id of the sealed store the record belongs to.
  public let storeID: [UInt8]
  /// The sign-in id the record holds (``ClockMarkRecord/signInID``), when the binding was read
  /// from the record: a staged set is read only when it is bound to this id. `nil` for a
  /// binding read from a live index (which names no sign-in) or a record without an id.
  public let signInID: SignInID?

  /// Creates a binding.
  ///
  /// - Parameters:
  ///   - generation: The record's generation.
  ///   - storeID: The sealed store's 8-byte id.
  ///   - signInID: The record's sign-in id, or `nil`.
  public init(generation: UInt64, storeID: [UInt8], signInID: SignInID? = nil) {
    self.generation = generation
    self.storeID = storeID
    self.signInID = signInID
  }

  /// Whether `transition` observed the record this set is bound to: the generation read under
  /// the lock and the store id of its verified seals are this binding's. `false` when the
  /// observation carries no store id (an unsealed mark store, or another backend).
  ///
  /// - Complexity: O(1).
  public func isConfirmed(by transition: ClockMarkTransition) -> Bool {
    transition.sealedStoreID == storeID && transition.previous.generation == generation
  }
}
