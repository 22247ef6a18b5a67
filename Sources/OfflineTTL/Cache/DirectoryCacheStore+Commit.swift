import Foundation

extension DirectoryCacheStore {
  /// See ``CacheItemStore/commit(_:onlyIf:)``.
  ///
  /// Under the `flock(2)` writer lock, after the precondition: (1) create `pending` and sync
  /// `cache/`; (2) write every new item to `tmp/` (0600, header with the exact `writtenAt` and a
  /// CRC-32); (3) one `syncfs(2)` makes them all durable; (4) unlink deleted items and rename the
  /// new ones into `items/`, then sync `items/` once; (5) write the index (temp, `fsync`, rename,
  /// sync `cache/`) and remove `pending`. A crash before (5) leaves `pending`, so the next
  /// reader rebuilds the index from the items; each item is old or new, never half of one.
  /// Creates the store directory and `cache/` (0700) when missing.
  ///
  /// - Complexity: O(n + k) for n stored and k changed items; six syncs whatever k is.
  public func commit(_ changes: CacheChanges, onlyIf precondition: () -> Bool)
    throws(CacheStoreError) -> Bool
  {
    try withLockedCache { cache throws(CacheStoreError) -> Bool in
      guard precondition() else { return false }
      if sealing != nil {
        try sealedApply(changes, cache: cache)
        return true
      }
      if changes.isEmpty { return true }
      do throws(Errno) {
        try apply(changes, cache: cache)
      } catch {
        throw CacheStoreError(
          code: .writeFailed, errno: error.rawValue,
          reason: "commit failed, items already committed are intact: \(error.description)")
      }
      return true
    }
  }

  /// See ``CacheItemStore/withWriterLock(_:)``: holds the `flock(2)` writer lock on
  /// `cache/lock` (creating the store directory and `cache/` with mode 0700 when missing) while
  /// `body` runs, and writes nothing, except in a sealed store when `body` moved the clock mark
  /// to a new generation (an online sign-in's reset): the index is then re-sealed for it before
  /// the lock is released, since a sealed index is bound to the mark's generation.
  public func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
    try withLockedCache { cache throws(CacheStoreError) in
      guard sealing != nil else { return body() }
      let before = try? sealedMarks.read().generation
      let result = body()
      if let after = try? sealedMarks.read().generation, after != before {
        try sealedApply(CacheChanges(), cache: cache)
      }
      return result
    }
  }

  /// Opens (creating when missing) the store directory and `cache/`, takes the writer lock, and
  /// runs `body` with `cache/` open; every descriptor is closed afterwards (which releases the
  /// lock).
  func withLockedCache<Result>(
    _ body: (FileDescriptor) throws(CacheStoreError) -> Result
  ) throws(CacheStoreError) -> Result {
    let store: FileDescriptor
    let cache: FileDescriptor
    do {
      store = try files.openOrCreateDirectory(nil, directory)
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.rawValue,
        reason: "cannot open or create the store directory \(directory): \(error.description)")
    }
    defer { files.close(store) }
    do {
      cache = try files.openOrCreateDirectory(store, Self.cacheName)
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.rawValue,
        reason: "cannot open or create \(directory)/\(Self.cacheName): \(error.description)")
    }
    defer { files.close(cache) }
    let lock: FileDescriptor
    do {
      lock = try files.openFile(cache, Self.lockName, [.readWrite, .create])
    } catch {
      throw CacheStoreError(
        code: .lockFailed, errno: error.rawValue,
        reason: "cannot open the cache lock: \(error.description)")
    }
    defer { files.close(lock) }
    do {
      try files.lockExclusive(lock)
    } catch {
      throw CacheStoreError(
        code: .lockFailed, errno: error.rawValue,
        reason: "cannot lock the cache: \(error.description)")
    }
    return try body(cache)
  }

  private func apply(_ changes: CacheChanges, cache: FileDescriptor) throws(Errno) {
    let items = try files.openOrCreateDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    let tmp = try files.openOrCreateDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    var catalog = CacheCatalog()
    if !changes.removesAll {
      if let indexed = readCatalog(cache) {
        catalog = indexed
      } else {
        catalog = try scanItems(cache)
      }
    }
    for leftover in try files.names(in: tmp) { try files.unlink(tmp, leftover) }

    // (1) Mark the commit in progress.
    files.close(try files.createFile(cache, Self.pendingName))
    try files.sync(cache)

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
    if !staged.isEmpty { try files.syncFileSystem(tmp) }
    #if !os(Linux)
      for entry in staged {
        let fd = try files.openFile(tmp, entry.temp, .readOnly)
        defer { files.close(fd) }
        try files.sync(fd)
      }
    #endif

    // (4) Deletions, then renames into items/, then one sync of items/.
    if changes.removesAll {
      for name in try files.names(in: items) { try files.unlink(items, name) }
    }
    for (key, change) in changes.entries where change == nil {
      try files.unlink(items, key.rawValue)
      catalog.entries[key.rawValue] = nil
      catalog.unreadable[key.rawValue] = nil
    }
    for entry in staged {
      try files.rename(tmp, entry.temp, items, entry.key)
      catalog.entries[entry.key] = entry.writtenAt
      catalog.unreadable[entry.key] = nil
    }
    try files.sync(items)

    // (5) Commit the index; while an unreadable item remains, leave `pending` so that every
    // check rebuilds and refuses.
    guard catalog.unreadable.isEmpty else { return }
    try writeIndex(cache, catalog, stamp: try itemsStamp(cache))
    try files.unlink(cache, Self.pendingName)
  }

  /// Creates `name` in `directory` (exclusively) holding one item file: header and payload.
  /// Used by the commit (into `tmp/`) and by the staged sign-in (into `next-<g>/items/`).
  func writeItem(_ directory: FileDescriptor, _ name: String, _ change: CacheChanges.Write)
    throws(Errno)
  {
    let fd = try files.createFile(directory, name)
    defer { files.close(fd) }
    // Header and payload in one buffer: one write(2) per item.
    var bytes = change.payload.withUnsafeBytes { payload in
      CacheFormat.itemHeader(writtenAt: change.writtenAt, payload: payload)
    }
    bytes.append(contentsOf: change.payload)
    try files.writeAll(fd, bytes)
  }
}
