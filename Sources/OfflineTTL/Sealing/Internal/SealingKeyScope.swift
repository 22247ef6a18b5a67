import Synchronization

/// One sealing key per operation: the first load of a provider's key inside a scope is the key
/// every later load of that provider (for the same store directory) returns until the scope
/// ends, whichever store asks (the item store and the mark store each hold their own provider).
///
/// A sign-in stages its items sealed with one key and commits with the mark reset, which seals
/// the record; a read verifies the mark, the index and the item. Loading the key again for each
/// of those steps let a key file removed or replaced in between split one operation over two
/// keys: a sign-in that reported success but left the index sealed with the old key and the
/// record with a new one it had just created (readable with neither), or a read that verified
/// the mark with one key and the index with another. Inside a scope the key is read once, so an
/// operation is sealed or verified with one key, as if the change happened after it; the next
/// operation reads the key file again and judges the change.
///
/// Scopes: the sealed sign-in and commit (around the writer lock, so the mark reset of its
/// commit point is inside), the gate's check, and each read of an offline reader. A scope
/// inside a scope is the outer one.
final class SealingKeyScope: Sendable {
  private let keys = Mutex<[String: SealKeys]>([:])

  /// The scope of the operation running on this task, if any.
  @TaskLocal static var current: SealingKeyScope?

  /// Runs `body` inside a scope: the current one, or a new one for its duration.
  ///
  /// - Complexity: O(1) besides `body`.
  static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
    -> Result
  {
    if current != nil { return try body() }
    let outcome = $current.withValue(SealingKeyScope()) {
      Swift.Result { () throws(Failure) -> Result in try body() }
    }
    return try outcome.get()
  }

  /// The keys of `provider` for the store in `directory`: those loaded first in this scope, or
  /// `load()`'s (kept for the rest of the scope). Outside a scope, `load()`'s.
  ///
  /// - Throws: What `load` throws (nothing is kept then).
  static func keys(
    of provider: any SealingKeyProvider, directory: String,
    load: () throws(StoreError) -> SealKeys
  ) throws(StoreError) -> SealKeys {
    guard let scope = current else { return try load() }
    let name = "\(provider)\u{0}\(directory)"
    if let kept = scope.keys.withLock({ $0[name] }) { return kept }
    let loaded = try load()
    return scope.keys.withLock { keys in
      if let kept = keys[name] { return kept }
      keys[name] = loaded
      return loaded
    }
  }
}
