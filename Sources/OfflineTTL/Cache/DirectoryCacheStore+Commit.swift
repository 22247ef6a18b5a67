import Foundation

extension DirectoryCacheStore {
  /// See ``CacheItemStore/commit(preparing:)``.
  ///
  /// Under the `flock(2)` writer lock, after `prepare` returned the changes: (1) create `pending`
  /// and sync `cache/`; (2) write every new item to `tmp/` (0600, header with the exact
  /// `writtenAt` and a CRC-32); (3) one `syncfs(2)` makes them all durable; (4) unlink deleted
  /// items and rename the new ones into `items/`, then sync `items/` once; (5) write the index
  /// (temp, `fsync`, rename, sync `cache/`) and remove `pending`. A crash before (5) leaves
  /// `pending`, so readers read the item headers (in memory) until the next commit or sign-in
  /// repairs the index; each item is old or new, never half of one.
  /// Creates the store directory and `cache/` (0700) when missing.
  ///
  /// This is the online path, so it also repairs the store (even for empty changes, as a
  /// sign-in's first step): whatever stands where `cache/`, `cache/lock`, `cache/index`,
  /// `cache/items/` or `cache/tmp/` belongs and is of the wrong type is removed; every entry of
  /// `items/` that is not a readable item of this user (a name that is not a key, a FIFO, a
  /// directory, another user's file, a wrong header or size) is removed; the index is rebuilt.
  /// A store directory that is another user's or writable by others is refused
  /// (``StoreError/Code/insecureStore``) and nothing is changed.
  ///
  /// - Complexity: O(n + k) for n stored and k changed items; six syncs whatever k is.
  public func commit(preparing prepare: () -> CacheChanges?) throws(CacheStoreError) -> Bool {
    if sealing != nil {
      // One key for the precondition's read of the mark and the whole sealed commit.
      return try SealingKeyScope.run { () throws(CacheStoreError) -> Bool in
        try withLockedCache { cache throws(CacheStoreError) -> Bool in
          guard let changes = prepare() else { return false }
          try Self.checkPayloadSizes(changes)
          try sealedApply(changes, cache: cache)
          return true
        }
      }
    }
    return try withLockedCache { cache throws(CacheStoreError) -> Bool in
      guard let changes = prepare() else { return false }
      try Self.checkPayloadSizes(changes)
      do throws(StoreFileError) {
        try apply(changes, cache: cache)
      } catch {
        throw CacheStoreError(
          code: error.isInsecure ? .insecureStore : .writeFailed, errno: error.errno?.rawValue,
          reason: "commit failed, items already committed are intact: \(error)"
            + (error.isInsecure ? Self.insecureAdvice : ""))
      }
      return true
    }
  }

  /// Refuses changes that write an item over the format's 1 GiB maximum, before anything of
  /// them is written.
  ///
  /// - Throws: ``StoreError`` `writeFailed` (`EFBIG`).
  /// - Complexity: O(k) for k changes.
  ///
  /// - Parameters:
  ///   - changes: The changes to check.
  ///   - madeFirst: What the operation made before its changes were known
  ///     (``sealedKeyMadeFirst``), or `nil`.
  static func checkPayloadSizes(_ changes: CacheChanges, madeFirst: String? = nil)
    throws(StoreError)
  {
    for case let (_, write?) in changes.entries
    where UInt64(write.payload.count) > CacheFormat.maximumPayloadLength {
      // The store directory, `cache/` and its lock may have been made just before (a first
      // commit): no item and no clock mark was.
      throw StoreError(
        code: .writeFailed, errno: Errno.fileTooLarge.rawValue,
        reason: "an item of \(write.payload.count) bytes is larger than the 1 GiB maximum;"
          + " no item was written and the clock mark was not changed"
          + (madeFirst.map { "; \($0)" } ?? ""))
    }
  }

  /// The end of a refusal's message that says nothing was written: exactly that, or, when the
  /// operation made something before the check that refused it (`madeFirst`), that nothing
  /// else was, and what it made.
  static func nothingWritten(_ madeFirst: String?, _ claim: String = "nothing was written")
    -> String
  {
    guard let madeFirst else { return claim }
    return claim.replacingOccurrences(of: "nothing", with: "nothing else") + "; " + madeFirst
  }

  /// See ``CacheItemStore/withWriterLock(_:)``: holds the `flock(2)` writer lock on
  /// `cache/lock` (creating the store directory and `cache/` with mode 0700 when missing) while
  /// `body` runs, and writes no item. Only the online sign-in takes it, so like a commit it
  /// replaces a `cache/` or `cache/lock` of the wrong type (a FIFO, a file, a link) first. In a
  /// sealed store, when `body` moved the clock mark to a new generation (an online sign-in's
  /// reset), the index is re-sealed for it before the lock is released, since a sealed index is
  /// bound to the mark's generation.
  public func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
    guard sealing != nil else { return try withLockedCache { _ in body() } }
    // One key for the reset `body` may make and the re-seal after it.
    return try SealingKeyScope.run { () throws(StoreError) -> Result in
      try sealedWithWriterLock(body)
    }
  }

  private func sealedWithWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
    try withLockedCache { cache throws(CacheStoreError) in
      let before = try? sealedMarks.read().generation
      let result = body()
      if let after = try? sealedMarks.read().generation, after != before {
        try sealedApply(
          CacheChanges(), cache: cache, afterReset: true, previousGeneration: before)
      }
      return result
    }
  }

  /// Opens (creating when missing) the store directory and `cache/`, takes the writer lock
  /// (waiting at most ``lockTimeout``: `lock_timed_out` past it, nothing written), and runs `body` with `cache/` open; every descriptor is closed afterwards (which releases the
  /// lock). The store directory must be this user's and writable by nobody else
  /// (`insecure_store`); a `cache/` or lock file of the wrong type is replaced (online path).
  ///
  /// `madeFirst` says what the operation made before it came here (a sealed sign-in's key:
  /// ``sealedKeyMadeFirst``), for the refusals here that say nothing was written.
  func withLockedCache<Result>(
    madeFirst: String? = nil, _ body: (StoreDirectory) throws(CacheStoreError) -> Result
  ) throws(CacheStoreError) -> Result {
    let store: StoreDirectory
    let cache: StoreDirectory
    do {
      store = try files.openStore(directory, creating: true, repairing: true)
    } catch {
      throw failure(error, .storeUnusable)
    }
    defer { files.close(store) }
    try refuseForeignDirectory(store, madeFirst: madeFirst)
    do {
      cache = try files.openOrReplaceDirectory(store, Self.cacheName)
    } catch {
      throw failure(error, .storeUnusable)
    }
    defer { files.close(cache) }
    let lock: OpenedStoreFile
    do {
      lock = try openOrReplaceLock(cache)
    } catch {
      throw failure(error, .lockFailed)
    }
    defer { files.close(lock.fd) }
    do {
      try files.lockExclusive(
        lock.fd, path: cache.path(of: Self.lockName), waitingAtMost: lockTimeout)
    } catch {
      throw failure(error, .lockFailed, madeFirst: madeFirst)
    }
    try refuseUnrepairableDirectories(cache, madeFirst: madeFirst)
    return try body(cache)
  }

  /// Refuses to make a new store (no `cache/` yet) in a directory that already holds anything
  /// but files the library makes there before `cache/` (``isMadeBeforeTheCache(_:)``): a store
  /// needs a directory of its own, and a sign-in pointed at another one (`/dev`, a home
  /// directory, a project) would write its files among that directory's entries. A directory
  /// that already holds `cache/` is a store (whatever else it holds is left alone, as before).
  ///
  /// - Throws: ``CacheStoreError``: `store_unusable` naming a few of the entries (nothing was
  ///   written), or when the directory cannot be listed.
  /// - Complexity: One `fstatat`; one listing only when `cache/` is missing.
  private func refuseForeignDirectory(_ store: StoreDirectory, madeFirst: String? = nil)
    throws(CacheStoreError)
  {
    let foreign: [String]
    do throws(StoreFileError) {
      guard !(try files.exists(store, Self.cacheName)) else { return }
      foreign = try files.names(in: store)
        // `cache` too: another writer may have made it since the look above.
        .filter { $0 != Self.cacheName && !Self.isMadeBeforeTheCache($0) }
        .sorted()
    } catch {
      throw failure(error, .storeUnusable)
    }
    guard foreign.isEmpty else {
      let shown = foreign.prefix(3).map(\.debugDescription).joined(separator: ", ")
      throw CacheStoreError(
        code: .storeUnusable,
        reason: "\(store.path) is not a store directory: it holds \(foreign.count) "
          + "entr\(foreign.count == 1 ? "y" : "ies") that no store makes (\(shown)"
          + "\(foreign.count > 3 ? ", ..." : "")); a new store needs an empty directory of its "
          + "own (a missing one is created); \(Self.nothingWritten(madeFirst))")
    }
  }

  /// ``refuseForeignDirectory(_:)`` without making or changing anything: only when the store
  /// directory exists and opens (every other case is left to the check under the writer lock,
  /// which reports it).
  ///
  /// - Throws: ``CacheStoreError``: `store_unusable` as ``refuseForeignDirectory(_:)``.
  func refuseForeignDirectoryIfPresent() throws(CacheStoreError) {
    guard let store = try? files.openStore(directory, creating: false) else { return }
    defer { files.close(store) }
    try refuseForeignDirectory(store)
  }

  /// Whether the library may have made a file named `name` in a store directory before the
  /// store's `cache/`: the clock-mark files (``FileClockMarkStore/reservedFileNames``: a
  /// `mark reset` or an observation comes first), and the Secret Service lock files
  /// (`secret-service.<application id>.<kind>.lock`) of a configuration whose lock directory is
  /// the store directory, as the command-line tool's is: a sealing key kept in the keyring is
  /// looked up or created under its lock before the store is made.
  static func isMadeBeforeTheCache(_ name: String) -> Bool {
    FileClockMarkStore.reservedFileNames.contains(name) || KeyringLockFileName.matches(name)
  }

  /// Refuses, before the online path writes anything, an `items/` or `tmp/` directory that
  /// another user owns or that group or others may write: the online path repairs what stands
  /// in the wrong place inside the store, but never a directory someone else controls (its
  /// entries may not even be removable), so a sign-in or commit over it would leave a store that
  /// every reader refuses, or a staging that no later sign-in can reclaim. The store directory,
  /// `cache/` and `cache/lock` are checked as they are opened; anything of the wrong type under
  /// these names is still replaced.
  ///
  /// - Throws: ``CacheStoreError``: `insecure_store` naming the directory (nothing was
  ///   written), or `store_unusable` when it cannot be examined.
  /// - Complexity: O(1): two `fstatat`.
  private func refuseUnrepairableDirectories(_ cache: StoreDirectory, madeFirst: String?)
    throws(CacheStoreError)
  {
    do throws(StoreFileError) {
      for name in [Self.itemsName, Self.tmpName] {
        try files.secure.refuseInsecureDirectory(name, in: cache)
      }
    } catch  where error.isInsecure {
      throw CacheStoreError(
        code: .insecureStore,
        reason: "\(error); \(Self.nothingWritten(madeFirst)) (the online path does not repair"
          + " a directory another user controls)" + Self.insecureAdvice)
    } catch {
      throw failure(error, .storeUnusable)
    }
  }

  /// The lock file, for the online path: anything but a regular file under its name (a FIFO, a
  /// directory, a link), or a lock file with another name (a hard link), is removed and a new
  /// lock file created (``SecureStoreFiles/openOrReplaceFile(_:in:_:)``). Another user's lock
  /// file is refused (`insecure`).
  private func openOrReplaceLock(_ cache: StoreDirectory) throws(StoreFileError)
    -> OpenedStoreFile
  {
    try files.secure.openOrReplaceFile(Self.lockName, in: cache, [.readWrite, .create])
  }

  /// Applies `changes` under the lock, repairing the store first (this is the online path):
  /// `items/` and `tmp/` are made directories again if something else stands there, `tmp/` is
  /// emptied, every entry of `items/` that is not a readable item of this user is removed, and
  /// an index that is not a regular file is removed. With no changes and a consistent index and
  /// no entry to remove, nothing is written.
  private func apply(_ changes: CacheChanges, cache: StoreDirectory) throws(StoreFileError) {
    let items = try files.openOrReplaceDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    let tmp = try files.openOrReplaceDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    for leftover in try files.names(in: tmp) { try files.remove(tmp, leftover) }
    var removedNonKeys = false
    for name in try files.names(in: items) where CacheItemKey.problem(with: name) != nil {
      try files.remove(items, name)
      removedNonKeys = true
    }
    var catalog = CacheCatalog()
    var consistent = false
    if !changes.removesAll {
      if !removedNonKeys, let indexed = readCatalog(cache) {
        catalog = indexed
        consistent = true
      } else {
        catalog = try scanItems(cache, removingNonItems: true, repairing: true)
      }
    }
    if changes.isEmpty && consistent { return }
    if let index = try? files.status(cache, Self.indexName), index.kind != .regular {
      try files.remove(cache, Self.indexName)
    }

    // (1) Mark the commit in progress.
    try markPending(cache)
    try files.sync(cache.fd, path: cache.path)

    // (2) Write every new item to tmp/, no sync yet.
    var staged: [(temp: String, key: String, writtenAt: WallClockInstant)] = []
    staged.reserveCapacity(changes.entries.count)
    for (key, change) in changes.entries {
      guard let change else { continue }
      let temp = "w\(staged.count)"
      try writeItem(tmp, temp, change)
      staged.append((temp, key.rawValue, change.writtenAt))
    }
    // (3) One sync for all of them.
    if !staged.isEmpty { try files.syncFileSystem(tmp.fd, path: tmp.path) }
    #if !os(Linux)
      for entry in staged {
        let file = try files.openFile(tmp, entry.temp, .readOnly)
        defer { files.close(file.fd) }
        try files.sync(file.fd, path: tmp.path(of: entry.temp))
      }
    #endif

    // (4) Deletions, then renames into items/, then one sync of items/.
    if changes.removesAll {
      for name in try files.names(in: items) { try files.remove(items, name) }
    }
    for (key, change) in changes.entries where change == nil {
      try files.remove(items, key.rawValue)
      catalog.entries[key.rawValue] = nil
    }
    for entry in staged {
      try files.rename(tmp, entry.temp, items, entry.key)
      catalog.entries[entry.key] = entry.writtenAt
    }
    try files.sync(items.fd, path: items.path)

    // (5) Commit the index and remove `pending`.
    try writeIndex(cache, catalog, stamp: try itemsStamp(cache))
    try files.remove(cache, Self.pendingName)
  }

  /// Creates `name` in `directory` (exclusively, mode 0600) holding one item file: header and
  /// payload. Used by the commit (into `tmp/`) and by the staged sign-in (into
  /// `next-<g>/items/`).
  func writeItem(_ directory: StoreDirectory, _ name: String, _ change: CacheChanges.Write)
    throws(StoreFileError)
  {
    let fd = try files.createFile(directory, name)
    defer { files.close(fd) }
    // Header and payload in one buffer: one write(2) per item.
    var bytes = change.payload.withUnsafeBytes { payload in
      CacheFormat.itemHeader(writtenAt: change.writtenAt, payload: payload)
    }
    bytes.append(contentsOf: change.payload)
    try files.writeAll(fd, bytes, path: directory.path(of: name))
  }
}
