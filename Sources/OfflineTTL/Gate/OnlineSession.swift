import Foundation
import Synchronization

/// The only writer of a cache: created by ``OfflineAccessGate/beginOnlineSession()`` after a
/// successful server sign-in (<doc:Rules#Never-delete-on-expiry>).
///
/// Writes are stamped with the wall clock read under the store's writer lock and applied as one
/// durable commit per call (``write(contentsOf:)-(Sequence<(CacheItemKey,Data)>)`` writes any
/// number of items with a constant number of syncs). Each
/// commit checks, under the store's writer lock, that this session is open and that no newer
/// online session has begun (the stored generation is still this session's); otherwise it
/// refuses and writes nothing. ``signOut()`` removes every item but keeps the clock mark and its
/// generation: a sign-out, a restart or a reinstall that keeps the store never resets the mark.
public final class OnlineSession: Sendable {
  private let gate: OfflineAccessGate
  /// The mark record this session's sign-in wrote.
  public let record: ClockMarkRecord
  private let closed = Mutex(false)

  /// The `writtenAt` of the items the sign-in itself wrote
  /// (``OfflineAccessGate/beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``), or `nil`
  /// when it wrote none.
  public let signInWrittenAt: WallClockInstant?

  /// The item store's failure after the sign-in's commit point, when it had one: the sign-in
  /// is committed (the mark was reset). `nil` when the sign-in finished.
  ///
  /// - A store that stages its sign-ins (``DirectoryCacheStore``): readers see the new item set
  ///   through its staging, and the next sign-in or session commit finishes the roll forward.
  ///   Nothing needs to be retried; report it, as a warning.
  /// - A store that cannot stage (the default `commitSignIn`, which writes after the commit
  ///   point; the Secret Service store): the sign-in's items may not all have been written,
  ///   and each may hold its new value, its old one or none. Sign in again with every item
  ///   (the command line exits 74, `sign_in_incomplete`).
  public let unfinishedRollForward: StoreError?

  init(
    gate: OfflineAccessGate, record: ClockMarkRecord, signInWrittenAt: WallClockInstant? = nil,
    unfinishedRollForward: StoreError? = nil
  ) {
    self.gate = gate
    self.record = record
    self.signInWrittenAt = signInWrittenAt
    self.unfinishedRollForward = unfinishedRollForward
  }

  /// This session's generation.
  public var generation: UInt64 { record.generation }

  /// Whether ``close()`` or ``signOut()`` was called.
  public var isClosed: Bool { closed.withLock { $0 } }

  /// Ends the session; later writes are refused with `closed`. Idempotent.
  public func close() {
    closed.withLock { $0 = true }
  }

  /// Writes (or replaces) one item, stamped with the wall clock read under the store's writer
  /// lock.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - payload: The bytes.
  /// - Returns: The `writtenAt` recorded.
  /// - Throws: ``OnlineSessionError``: `closed`, `superseded`, or a store failure.
  @discardableResult
  public func write(_ key: CacheItemKey, _ payload: Data) throws(OnlineSessionError)
    -> WallClockInstant
  {
    try write(contentsOf: [(key, payload)])
  }

  /// Writes (or replaces) many items in one durable commit, all stamped with the wall clock read
  /// under the store's writer lock (so a write that waited for another one is stamped after it).
  ///
  /// - Parameter items: Keys and bytes; a later duplicate key wins.
  /// - Returns: The `writtenAt` recorded.
  /// - Throws: ``OnlineSessionError``: `closed`, `superseded`, or a store failure; nothing of
  ///   this call is visible then (except what a crash-free partial write failure left, which the
  ///   store reports as `write_failed`; committed items stay intact).
  /// - Complexity: O(n + k); a constant number of syncs (see ``DirectoryCacheStore``). Blocks
  ///   the calling thread on `flock` and `fdatasync`; from Swift concurrency use
  ///   ``writeAsync(contentsOf:)``.
  @discardableResult
  public func write(contentsOf items: some Sequence<(CacheItemKey, Data)>)
    throws(OnlineSessionError) -> WallClockInstant
  {
    let items = Array(items)
    let anchored = record.trustedTime?.isAnchored == true
    var now: WallClockInstant?
    try commit {
      // Stamped under the writer lock: after every commit and sign-in this one waited for.
      let stamp = gate.itemStampTime(anchored: anchored)
      now = stamp
      var changes = CacheChanges()
      for (key, payload) in items { changes.write(key, payload, writtenAt: stamp) }
      return changes
    }
    guard let now else {
      // `commit` returns only after the changes were prepared.
      preconditionFailure("the store applied a commit without preparing it")
    }
    return now
  }

  /// Writes (or replaces) an array of items in one durable commit: the same as the variant that
  /// takes any sequence (``write(contentsOf:)-(Sequence<(CacheItemKey,Data)>)``). This overload
  /// lets an array literal with string-literal keys be written in place (`session.write(contentsOf:
  /// [("token", data)])`).
  ///
  /// - Parameter items: Keys and bytes; a later duplicate key wins.
  /// - Returns: The `writtenAt` recorded.
  /// - Throws: ``OnlineSessionError``, as the sequence variant.
  /// - Complexity: As the sequence variant: O(n + k); a constant number of syncs.
  @discardableResult
  public func write(contentsOf items: [(CacheItemKey, Data)]) throws(OnlineSessionError)
    -> WallClockInstant
  {
    try write(contentsOf: items[...])
  }

  /// Deletes one item (a missing one is not an error).
  ///
  /// - Parameter key: The item's key.
  /// - Throws: ``OnlineSessionError``: `closed`, `superseded`, or a store failure.
  public func delete(_ key: CacheItemKey) throws(OnlineSessionError) {
    try commit {
      var changes = CacheChanges()
      changes.delete(key)
      return changes
    }
  }

  /// Signs out: removes every item and closes the session. The clock mark and its generation
  /// are kept (a sign-out never resets the mark).
  ///
  /// - Throws: ``OnlineSessionError``: `closed`, `superseded`, or a store failure.
  public func signOut() throws(OnlineSessionError) {
    try commit {
      var changes = CacheChanges()
      changes.removeAll()
      return changes
    }
    close()
  }

  /// Commits the changes `prepare` makes (under the writer lock, after the admission) if this
  /// session is still open and current.
  func commit(_ prepare: () -> CacheChanges) throws(OnlineSessionError) {
    guard !isClosed else {
      throw OnlineSessionError(.closed, reason: "the online session is closed")
    }
    var refusal: OnlineSessionError?
    let applied: Bool
    do throws(CacheStoreError) {
      applied = try gate.cache.commit(preparing: { () -> CacheChanges? in
        refusal = admission()
        return refusal == nil ? prepare() : nil
      })
    } catch {
      throw OnlineSessionError(cacheError: error)
    }
    if !applied {
      throw refusal ?? OnlineSessionError(.closed, reason: "the store refused the commit")
    }
  }

  /// Run under the store's writer lock: `nil` when this session may still write.
  private func admission() -> OnlineSessionError? {
    if isClosed { return OnlineSessionError(.closed, reason: "the online session is closed") }
    let stored: ClockMarkRecord
    do throws(ClockMarkStoreError) {
      stored = try gate.marks.read()
    } catch {
      return OnlineSessionError(markError: error)
    }
    guard stored.generation == record.generation else {
      return OnlineSessionError(
        .superseded,
        reason: "a newer online session (generation \(stored.generation)) has begun;"
          + " this one is generation \(record.generation)")
    }
    return nil
  }
}
