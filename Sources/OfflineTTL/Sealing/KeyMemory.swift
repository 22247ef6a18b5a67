import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The key a ``FileSealingKeyProvider`` last read, with the identity of the file it came from
/// and the store directories whose placement check passed for it (at most 64).
@_spi(Testing)
public final class KeyMemory: Sendable {
  /// The watch of the remembered key's file, for a store's check to poll with its own
  /// (``JoinedChangeWatch``); `nil` when no key is remembered or its path is not watched.
  var watch: KeyFileWatch? { entry.withLock { $0?.watch } }

  struct Entry: Sendable {
    let key: SealingKey
    /// The key file's status from the load's `fstat`.
    let status: FileStatus
    /// The effective user the load checked the owner against.
    let user: UInt32
    /// What says the file is unchanged without an `lstat`, where it can be relied on.
    let watch: KeyFileWatch?
    var placedOutside: Set<String>
  }

  let entry = Mutex<Entry?>(nil)
  /// Moves at every change of ``entry`` (a key remembered, replaced or forgotten, a store
  /// directory added to its placements), under the entry's lock: a store value that resolved
  /// its subkeys from one entry reuses them only while this has not moved
  /// (``ResolvedSealKeys``).
  let generation = Atomic<UInt64>(0)
  /// How much older than the clock a key file's times must be for its key to be remembered.
  let settle: Duration

  /// The default of ``settle``: 2 seconds (more than any file system's timestamp tick).
  public static let defaultSettle = Duration.seconds(2)

  init(settle: Duration) {
    self.settle = settle
  }

  /// Whether the file's modification and status-change times are at least ``settle`` before
  /// the wall clock now (`CLOCK_REALTIME`, the clock file times come from): a rewrite after this
  /// load then changes them. A clock set back makes this `false` (nothing is remembered), never
  /// a stale key.
  func isSettled(_ status: FileStatus) -> Bool {
    var now = timespec()
    guard clock_gettime(CLOCK_REALTIME, &now) == 0 else { return false }
    let nowNanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    let latest = max(status.changeTimeNanoseconds, status.modificationTimeNanoseconds)
    let margin =
      settle.components.seconds * 1_000_000_000 + settle.components.attoseconds / 1_000_000_000
    return latest <= nowNanoseconds - margin
  }

  /// Remembers `key` read from a file with `status` (or forgets any key when `remember` is
  /// `false`); the placement set carries over when the file is the one remembered before.
  func remember(
    key: SealingKey, status: FileStatus, user: UInt32, watch: KeyFileWatch?,
    placedOutside directory: String?, remember: Bool
  ) {
    entry.withLock { entry in
      generation.wrappingAdd(1, ordering: .releasing)
      guard remember else {
        entry = nil
        return
      }
      var placed: Set<String> = []
      if let old = entry, old.status == status, old.user == user, old.key.bytes == key.bytes {
        placed = old.placedOutside
      }
      if let directory {
        if placed.count >= 64 { placed.removeAll() }
        placed.insert(directory)
      }
      entry = Entry(key: key, status: status, user: user, watch: watch, placedOutside: placed)
    }
  }

  /// What a store value needs to reuse `key` for the store in `directory` without asking the
  /// provider again (``ResolvedSealKeys``): ``generation`` now, the remembered file's watch and
  /// the effective user of its load, when the remembered key is `key`, its placement outside
  /// `directory` was checked, and its path is watched; else `nil`.
  ///
  /// - Complexity: One hash of `directory` and one 32-byte comparison, under the entry's lock.
  func reusable(_ key: SealingKey, forStoreAt directory: String) -> (
    generation: UInt64, watch: KeyFileWatch, user: UInt32
  )? {
    entry.withLock { entry in
      guard let entry, let watch = entry.watch, entry.placedOutside.contains(directory),
        Sodium.equalInConstantTime(entry.key.bytes, key.bytes)
      else { return nil }
      return (generation.load(ordering: .relaxed), watch, entry.user)
    }
  }
}
