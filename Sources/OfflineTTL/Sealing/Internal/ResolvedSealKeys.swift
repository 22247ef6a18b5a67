import Synchronization

/// The subkeys a sealed store value last resolved from a key file's memory (the ``KeyMemory``
/// of a ``FileSealingKeyProvider``), kept beside the store value (shared by its copies) so that
/// a repeated check does not ask the provider again.
///
/// A load from the provider's memory takes its lock, copies the entry, looks the store
/// directory up in the set of placements checked for the key (a hash of the path), asks the
/// key file's watch, and derives nothing only after comparing the key with the last one
/// derived (a second lock). Here the store value keeps what that load found, tagged with the
/// memory's ``KeyMemory/generation``, and reuses it while
/// - the memory's generation has not moved (no key was remembered, replaced or forgotten since,
///   and no placement changed), and
/// - the remembered file's watch (``KeyFileWatch``) still reports nothing, for the same
///   effective user, which is exactly what the provider's own load asks of its remembered key
///   (one `poll` of its own, or none in a check whose store `poll` joined it).
///
/// So the reused subkeys are those the provider's load would return at that moment; every
/// change it would see (another key, a rewrite, `chmod`, a link or a mount, the key
/// forgotten) sends the next resolution to the provider. Keys that the provider does not
/// remember, or whose path it cannot watch (it then makes an `lstat` per load), are never
/// reused here.
final class ResolvedSealKeys: Sendable {
  /// One resolution: the subkeys, and what they are reused against (immutable: handed out of
  /// the lock with one reference count).
  final class Resolved: Sendable {
    let generation: UInt64
    let keys: SealKeys
    /// The remembered key file's watch.
    let watch: KeyFileWatch
    /// The effective user the provider's load checked the file's owner against.
    let user: UInt32

    init(generation: UInt64, keys: SealKeys, watch: KeyFileWatch, user: UInt32) {
      self.generation = generation
      self.keys = keys
      self.watch = watch
      self.user = user
    }

    /// The subkeys, while the watch reports nothing for the same effective user (one `poll`
    /// of the watch, or none in a check whose store `poll` joined it; see
    /// ``KeyFileWatch/unchangedUser()``); else `nil`.
    var keysIfUnchanged: SealKeys? {
      guard let now = watch.unchangedUser(), now == user else { return nil }
      return keys
    }
  }

  /// The provider's memory.
  let memory: KeyMemory
  /// The store directory the placement check is asked for.
  let directory: String
  private let resolved = Mutex<Resolved?>(nil)

  /// The resolution memo of a store in `directory` sealed by `provider`, or `nil` for a
  /// provider that keeps no memory of its own (not a key file).
  init?(_ provider: (any SealingKeyProvider)?, directory: String) {
    guard let file = provider as? FileSealingKeyProvider else { return nil }
    self.memory = file.memory
    self.directory = directory
  }

  /// The resolution kept, while the memory's generation is the one it was tagged with (its
  /// watch not asked yet).
  ///
  /// - Complexity: O(1): one lock and one atomic load.
  var current: Resolved? {
    guard let kept = resolved.withLock({ $0 }),
      kept.generation == memory.generation.load(ordering: .acquiring)
    else { return nil }
    return kept
  }

  /// The watch of the remembered key file, for a store's `poll` to join
  /// (``JoinedChangeWatch``): the kept resolution's while it is current, else the memory's.
  var watch: KeyFileWatch? { current?.watch ?? memory.watch }

  /// The subkeys of the provider's key for this store: the kept ones while they are current
  /// (see the type's discussion), else `load()`'s (the provider's load for this directory),
  /// kept when the memory holds that very key for this directory with a watch.
  ///
  /// - Throws: What `load` throws (nothing is kept then).
  /// - Complexity: O(1) while the kept subkeys are current (two locks, no system call inside a
  ///   check whose store `poll` joined the key's watch); else `load`, one lookup and, when the
  ///   key is kept, one allocation.
  func keys<Failure: Error>(load: () throws(Failure) -> SealingKey) throws(Failure) -> SealKeys {
    if let keys = current?.keysIfUnchanged { return keys }
    let key = try load()
    let keys = SealKeys.of(key)
    if let found = memory.reusable(key, forStoreAt: directory) {
      let kept = Resolved(
        generation: found.generation, keys: keys, watch: found.watch, user: found.user)
      resolved.withLock { $0 = kept }
    }
    return keys
  }
}
