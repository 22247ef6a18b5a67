import Foundation

/// The embedded default ``CacheItemStore``: one file per item in a private directory, beside the
/// clock mark in the same store directory.
///
/// Layout inside the store directory (the mark store's own files, such as `clock-mark`, sit
/// beside `cache/` and can never clash with a key):
/// ```
/// cache/            0700
///   lock            flock(2) writer lock
///   index           count, oldest and newest writtenAt (a fixed 72-byte header), then every
///                   key with its writtenAt; maintained by the writer under the lock
///   pending         present while a commit is in progress (or crashed): readers then read the
///                   item headers instead of the index (in memory; only the online path repairs)
///   tmp/            new files before they are renamed into place
///   items/<key>     0600; header with the exact writtenAt, length and CRC-32, then the payload
/// ```
/// The byte layouts are in `docs/cache-format.md`.
///
/// - ``summary()`` reads the index header and makes two `stat` calls: its cost does not depend on
///   the number of items. A missing index, a `pending` marker, or an items directory changed
///   since the index was written (another tool added or removed files) makes it read the item
///   headers instead, in memory, holding the writer lock shared; nothing is written offline:
///   the index is rewritten, and `pending` removed, only by the next sign-in or session commit.
///   An unsealed store value that has served a summary from a consistent index keeps the store
///   directory, `cache/` and the index open for the next ones (shared by its copies, closed with
///   the last): each then makes one `lstat`, four `fstatat` and one 72-byte `pread`, checking
///   that every one of them is still the file its path names, owned by this user and writable by
///   nobody else, the index unchanged and no `pending` marker present, and takes the full path
///   at any doubt, so a sign-in by another process (a new index renamed into place) is seen by
///   the next call.
/// - ``commit(preparing:)`` writes every new file, then makes them durable with *one*
///   `syncfs(2)` (Linux; one `fsync` per file elsewhere), renames them into place, syncs the items
///   directory once and commits the index: a constant number of syncs per commit, not one per item.
/// - No path follows a symbolic link and no open waits: every component is opened
///   `O_NONBLOCK | O_NOFOLLOW` and checked on its descriptor (the secure open shared with the
///   mark store). A FIFO, socket, device, directory or link where a file belongs is
///   ``StoreError/Code/notARegularFile``; a file or directory of another user, or one that
///   group or others may write, is ``StoreError/Code/insecureStore``; an item of the wrong
///   size, header or checksum is ``StoreError/Code/itemUnreadable``. Offline paths leave all of
///   these where they are; the online path (``commit(preparing:)``) removes what is not an item
///   and rebuilds the index (but never touches an insecure store).
/// - Every length read from disk is checked against the file's `fstat` size and a documented
///   maximum (1 GiB per payload, 1,048,576 items per index) before anything is allocated.
public struct DirectoryCacheStore: CacheItemStore {
  /// The store directory (shared with `FileClockMarkStore`).
  public let directory: String
  /// The sealing key's provider when the store is sealed, else `nil`.
  public let sealing: (any SealingKeyProvider)?
  let files: CacheFiles
  /// The descriptors kept open between summaries of an unsealed store (`keptSummary()`), shared
  /// by every copy of this value.
  let kept: KeptCacheFiles
  /// The sealing key's name in an operation's scope (built once; `nil` when unsealed).
  let sealingScopeName: SealingKeyScope.Name?
  /// How long an operation waits for `cache/lock` (and, sealed, for the clock mark's lock it
  /// reads the index's binding under) while another thread or process holds it; past it the
  /// operation fails with ``StoreError/Code/lockTimedOut`` (the gate refuses with it) and
  /// writes and deletes nothing. Zero or less: never wait. Default ``defaultLockTimeout``, 30
  /// seconds: longer than an honest commit holds the lock on a working disk, short enough that
  /// a holder stopped with `SIGSTOP`, hung, or holding it on purpose cannot make every sign-in
  /// and read wait forever.
  public var lockTimeout: Duration = DirectoryCacheStore.defaultLockTimeout
  /// The default ``lockTimeout``: 30 seconds (``FileClockMarkStore/defaultLockTimeout``).
  public static let defaultLockTimeout: Duration = FileClockMarkStore.defaultLockTimeout
  /// The subkeys this store value last resolved from a key-file provider's memory
  /// (``FileSealingKeyProvider``), whose key file's watch a repeated check polls together with
  /// the store's (`nil` for any other provider); shared by every copy of this value.
  let resolvedSealKeys: ResolvedSealKeys?

  static let cacheName = "cache"
  static let itemsName = "items"
  static let tmpName = "tmp"
  static let lockName = "lock"
  static let indexName = "index"
  static let pendingName = "pending"

  /// Creates a store over a directory given by path; nothing is created until the first commit
  /// (the same family as ``FileClockMarkStore/init(atPath:)``; a file URL works too).
  ///
  /// - Parameter path: The store directory's path. Its parents may be symbolic links; the
  ///   directory itself and everything the store creates inside it are never followed as links.
  /// - Complexity: O(1); no I/O.
  public init(atPath path: String) {
    self.init(atPath: path, sealing: nil)
  }

  /// Creates a store over a directory, sealed with the key of `sealing` when it is given;
  /// nothing is created until the first commit.
  ///
  /// A sealed store encrypts every payload (XChaCha20-Poly1305) bound to the store, the key,
  /// `writtenAt` and the generation it was committed under, and MACs its index, bound to the
  /// clock mark's generation: pair it with a ``FileClockMarkStore`` over the same directory and
  /// provider. It refuses what does not authenticate (`item_unauthentic`, `index_unauthentic`),
  /// an unsealed or differently sealed store (`seal_mismatch`), and leaves it in place; an
  /// unsealed store refuses a sealed one (`key_required`). Only the online path
  /// (``commitSignIn(preparing:storedGeneration:commitPoint:)`` and ``commit(preparing:)``) may
  /// create a missing key, re-seal the index, and drop item files that no longer authenticate.
  /// A sealed sign-in stages its items sealed for the generation it commits (see
  /// `docs/sign-in-protocol.md`). The rule: <doc:Rules#Sealed-stores>; layouts:
  /// `docs/cache-format.md`.
  ///
  /// - Parameters:
  ///   - path: The store directory's path.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  /// - Complexity: O(1); no I/O.
  public init(atPath path: String, sealing: (any SealingKeyProvider)?) {
    self.directory = path
    self.sealing = sealing
    self.files = CacheFiles(sys: Syscalls())
    self.kept = KeptCacheFiles(system: files.sys)
    self.sealingScopeName = sealing.map { SealingKeyScope.Name($0, directory: path) }
    self.resolvedSealKeys = ResolvedSealKeys(sealing, directory: path)
  }

  /// Creates a store whose every system call first consults a fault plan (for tests).
  ///
  /// - Parameters:
  ///   - path: The store directory's path.
  ///   - faults: The plan that may fail any call with any error.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @_spi(Testing)
  public init(
    atPath path: String, faults: SyscallFaultPlan, sealing: (any SealingKeyProvider)? = nil
  ) {
    self.directory = path
    self.sealing = sealing
    self.files = CacheFiles(sys: Syscalls(faults: faults))
    self.kept = KeptCacheFiles(system: files.sys)
    self.sealingScopeName = sealing.map { SealingKeyScope.Name($0, directory: path) }
    self.resolvedSealKeys = ResolvedSealKeys(sealing, directory: path)
  }

  /// Creates a store over a directory given as a file URL; no I/O.
  ///
  /// - Parameter url: The store directory.
  public init(at url: URL) {
    self.init(atPath: url.path)
  }

  /// Creates a sealed (or, with `nil`, unsealed) store over a directory given as a file URL;
  /// as ``init(atPath:sealing:)``.
  ///
  /// - Parameters:
  ///   - url: The store directory.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  public init(at url: URL, sealing: (any SealingKeyProvider)?) {
    self.init(atPath: url.path, sealing: sealing)
  }

  /// The earlier spelling of ``init(atPath:)``; it keeps working.
  ///
  /// - Parameter directory: The store directory's path.
  @available(*, deprecated, renamed: "init(atPath:)")
  public init(at directory: String) {
    self.init(atPath: directory)
  }

  /// The earlier spelling of ``init(atPath:sealing:)``; it keeps working.
  ///
  /// - Parameters:
  ///   - directory: The store directory's path.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @available(*, deprecated, renamed: "init(atPath:sealing:)")
  public init(at directory: String, sealing: (any SealingKeyProvider)?) {
    self.init(atPath: directory, sealing: sealing)
  }

  /// The earlier spelling of `init(atPath:faults:sealing:)`; it keeps working.
  ///
  /// - Parameters:
  ///   - directory: The store directory's path.
  ///   - faults: The plan that may fail any call with any error.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @_spi(Testing)
  @available(*, deprecated, renamed: "init(atPath:faults:sealing:)")
  public init(
    at directory: String, faults: SyscallFaultPlan, sealing: (any SealingKeyProvider)? = nil
  ) {
    self.init(atPath: directory, faults: faults, sealing: sealing)
  }

  /// The store directory's path, as ``FileClockMarkStore/directoryPath`` names it (the same as
  /// ``directory``).
  public var directoryPath: String { directory }

  /// See ``CacheItemStore/summary()``.
  ///
  /// A missing store directory or `cache/` directory is an empty cache.
  ///
  /// - Complexity: O(1) in the number of items: one 72-byte read and two `stat` calls, except
  ///   while the index is inconsistent (O(n) header reads, no payload read, until the next
  ///   online commit rewrites it).
  public func summary() throws(CacheStoreError) -> ItemTimeSummary {
    if let kept = keptSummary() { return kept }
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil { return try sealedSummary(cache, generation: nil) }
    if let fast = try fastIndexHeader(cache) {
      noteConsistentIndex()
      return fast.summary
    }
    try refuseSealedIndex(cache)
    return try summaryFromItems(cache).summary
  }

  /// See ``CacheItemStore/item(forKey:)``. Opens the item without waiting and checks it on its
  /// descriptor (a regular file of this user that nobody else may write), reads its 28-byte
  /// header, checks the payload length against the file's size and the 1 GiB maximum, and only
  /// then reads the payload and checks its CRC-32.
  ///
  /// - Throws: ``CacheStoreError``: `not_a_regular_file` (a FIFO, socket, device, directory or
  ///   link under the key), `insecure_store`, `item_unreadable` (wrong size, header or
  ///   checksum); the item is left alone.
  /// - Complexity: O(payload size).
  public func item(forKey key: CacheItemKey) throws(CacheStoreError) -> CacheItem? {
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    if sealing != nil { return try sealedItem(cache, key, generation: nil) }
    return try readItem(key, inSet: cache)
  }

  /// Reads `key` from `<set>/items/<key>`, where `set` is `cache/` (the live set) or a sign-in's
  /// staging directory; `nil` when it is not there. Checked as ``item(forKey:)`` says.
  func readItem(_ key: CacheItemKey, inSet set: StoreDirectory) throws(CacheStoreError)
    -> CacheItem?
  {
    guard let opened = try openCheckedItem(key, inSet: set) else { return nil }
    defer { files.close(opened.file.fd) }
    let header = opened.header
    // Read into memory that becomes the payload's own storage, its CRC-32 checked there.
    let payload: Data?
    do {
      payload = try files.readPayload(
        opened.file.fd, count: Int(header.payloadLength),
        offset: Int64(CacheFormat.itemHeaderSize), path: opened.path
      ) {
        CacheFormat.crc(UnsafeRawBufferPointer($0), seed: opened.checksumSeed) == header.checksum
      }
    } catch {
      throw failure(error, .itemUnreadable, key: key)
    }
    guard let payload else { throw unreadable(key, "truncated or bad checksum") }
    return CacheItem(key: key, payload: payload, writtenAt: header.writtenAt)
  }

  /// See ``CacheItemStore/keys()``. Lists the items directory (names that are not valid keys,
  /// which only another tool could have made, are skipped).
  public func keys() throws(CacheStoreError) -> [CacheItemKey] {
    guard let cache = try openCache() else { return [] }
    defer { files.close(cache) }
    if sealing != nil { return try sealedKeys(cache) }
    do {
      let items = try files.openDirectory(cache, Self.itemsName)
      defer { files.close(items) }
      return try files.names(in: items)
        .filter { CacheItemKey.problem(with: $0) == nil }
        .map { CacheItemKey(validated: $0) }
        .sorted()
    } catch  where error.errno == .noSuchFileOrDirectory {
      return []
    } catch {
      throw failure(error, .storeUnusable)
    }
  }

  /// Checks the store directory the way every operation opens it: a directory (no spelling of
  /// the path follows a symbolic link in its place), owned by this user, not writable by group
  /// or others; and so is `cache/` when present.
  ///
  /// - Throws: ``CacheStoreError``: `insecure_store` or `store_unusable`, naming the path.
  public func checkStoreDirectory() throws(CacheStoreError) {
    if let cache = try openCache() { files.close(cache) }
  }

  /// Opens `<directory>/cache` for reading, or returns `nil` when it (or the store directory)
  /// does not exist.
  func openCache() throws(CacheStoreError) -> StoreDirectory? {
    do {
      let store = try files.openStore(directory, creating: false)
      defer { files.close(store) }
      return try files.openDirectory(store, Self.cacheName)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw failure(error, .storeUnusable)
    }
  }

  /// What to advise for an insecure store.
  static let insecureAdvice =
    "; a store must be owned by this user and writable by nobody else: check its contents,"
    + " then remove the write access (chmod go-w; chown it back first if another user owns it),"
    + " or remove the store and sign in online again"

  /// What to do about an `insecure` problem: ``insecureAdvice``, except for a directory with the
  /// sticky bit (a shared directory such as `/tmp` used as the store itself), which must be
  /// neither changed nor removed: the store needs a directory of its own.
  ///
  /// - Parameter error: The secure open's error.
  /// - Returns: The advice, starting with `"; "`.
  static func insecureAdvice(for error: StoreFileError) -> String {
    guard case .insecure(_, let permissions, _) = error.problem, permissions & 0o1000 != 0 else {
      return insecureAdvice
    }
    return
      "; this is a shared directory (sticky bit, like /tmp), which a store must not be: give"
      + " the store a directory of its own inside it (created 0700 by the first sign-in), and"
      + " change nothing in the shared one"
  }

  /// The store error for a failed open or call: `insecure_store` for an owner or mode,
  /// `not_a_regular_file` for a wrong type where a file belongs (`store_unusable` when `code`
  /// is, for the directories), else `code` with the errno. `madeFirst`: what the operation made
  /// before (``nothingWritten(_:_:)``), for the lock wait's "nothing was read or written".
  func failure(
    _ error: StoreFileError, _ code: CacheStoreError.Code, key: CacheItemKey? = nil,
    madeFirst: String? = nil
  ) -> CacheStoreError {
    let suffix = key == nil ? "" : "; left alone"
    switch error.problem {
    case .insecure:
      return CacheStoreError(
        code: .insecureStore, key: key,
        reason: error.description + Self.insecureAdvice(for: error))
    case .hardLinked:
      return CacheStoreError(
        code: .insecureStore, key: key,
        reason: error.description
          + (key == nil ? StoreFileError.hardLinkAdvice : StoreFileError.itemHardLinkAdvice))
    case .symbolicLink, .notRegularFile, .notDirectory:
      return CacheStoreError(
        code: code == .storeUnusable ? .storeUnusable : .notARegularFile, key: key,
        reason: error.description + suffix)
    case .oversized, .endsInParentName:
      return CacheStoreError(code: code, key: key, reason: error.description + suffix)
    case .system(let errno) where errno == .timedOut:
      // Only the bounded lock wait reports ETIMEDOUT.
      return CacheStoreError(
        code: .lockTimedOut,
        reason: "\(error.path) stayed locked by another thread or process for longer than the"
          + " lock timeout (\(lockTimeout)); "
          + Self.nothingWritten(madeFirst, "nothing was read or written"))
    case .system(let errno):
      return CacheStoreError(
        code: code, key: key, errno: errno.rawValue, reason: error.description + suffix)
    }
  }

  func unreadable(_ key: CacheItemKey, _ why: String) -> CacheStoreError {
    CacheStoreError(
      code: .itemUnreadable, key: key,
      reason: "item \(key) is unreadable (\(why)); left alone")
  }

  /// An unsealed store over a sealed index: `key_required` instead of a rebuild.
  func refuseSealedIndex(_ cache: StoreDirectory) throws(CacheStoreError) {
    guard let file = try? files.openFile(cache, Self.indexName, .readOnly) else { return }
    defer { files.close(file.fd) }
    if let bytes = try? files.read(
      file.fd, count: 8, offset: 0, path: cache.path(of: Self.indexName)),
      CacheSeal.looksSealedIndex(bytes)
    {
      throw CacheStoreError(
        code: .keyRequired,
        reason: "the item index in \(directory) is sealed; open the store with its sealing key")
    }
  }

  /// The item error for a failed call while an item's bytes are read.
  func unreadable(_ key: CacheItemKey, _ error: Errno) -> CacheStoreError {
    let why =
      error == .tooManySymbolicLinks ? "is a symbolic link (never followed)" : error.description
    return CacheStoreError(
      code: .itemUnreadable, key: key, errno: error.rawValue,
      reason: "item \(key) \(why); left alone")
  }
}
