import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
    let store: Int32
    let cache: Int32
    do {
      store = try CacheFiles.openOrCreateDirectory(AT_FDCWD, directory)
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.errno,
        reason: "cannot open or create the store directory \(directory): \(error.message)")
    }
    defer { CacheFiles.close(store) }
    do {
      cache = try CacheFiles.openOrCreateDirectory(store, Self.cacheName)
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.errno,
        reason: "cannot open or create \(directory)/\(Self.cacheName): \(error.message)")
    }
    defer { CacheFiles.close(cache) }
    let lock: Int32
    do {
      lock = try CacheFiles.openFile(cache, Self.lockName, O_RDWR | O_CREAT)
    } catch {
      throw CacheStoreError(
        code: .lockFailed, errno: error.errno, reason: "cannot open the cache lock: \(error.message)")
    }
    defer { CacheFiles.close(lock) }
    do {
      try CacheFiles.lockExclusive(lock)
    } catch {
      throw CacheStoreError(
        code: .lockFailed, errno: error.errno, reason: "cannot lock the cache: \(error.message)")
    }
    guard precondition() else { return false }
    if changes.isEmpty { return true }
    do {
      try apply(changes, cache: cache)
    } catch {
      throw CacheStoreError(
        code: .writeFailed, errno: error.errno,
        reason: "commit failed, items already committed are intact: \(error.message)")
    }
    return true
  }

  private func apply(_ changes: CacheChanges, cache: Int32) throws(SystemCallError) {
    let items = try CacheFiles.openOrCreateDirectory(cache, Self.itemsName)
    defer { CacheFiles.close(items) }
    let tmp = try CacheFiles.openOrCreateDirectory(cache, Self.tmpName)
    defer { CacheFiles.close(tmp) }
    var catalog = CacheCatalog()
    if !changes.removesAll {
      if let indexed = readCatalog(cache) {
        catalog = indexed
      } else {
        catalog = try scanItems(cache)
      }
    }
    for leftover in try CacheFiles.names(in: tmp) { try CacheFiles.unlink(tmp, leftover) }

    // (1) Mark the commit in progress.
    CacheFiles.close(try CacheFiles.createFile(cache, Self.pendingName))
    try CacheFiles.sync(cache)

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
    if !staged.isEmpty { try CacheFiles.syncFileSystem(tmp) }
    #if !os(Linux)
      for entry in staged {
        let fd = try CacheFiles.openFile(tmp, entry.temp, O_RDONLY)
        defer { CacheFiles.close(fd) }
        try CacheFiles.sync(fd)
      }
    #endif

    // (4) Deletions, then renames into items/, then one sync of items/.
    if changes.removesAll {
      for name in try CacheFiles.names(in: items) { try CacheFiles.unlink(items, name) }
    }
    for (key, change) in changes.entries where change == nil {
      try CacheFiles.unlink(items, key.rawValue)
      catalog.entries[key.rawValue] = nil
      catalog.unreadable[key.rawValue] = nil
    }
    for entry in staged {
      try CacheFiles.rename(tmp, entry.temp, items, entry.key)
      catalog.entries[entry.key] = entry.writtenAt
      catalog.unreadable[entry.key] = nil
    }
    try CacheFiles.sync(items)

    // (5) Commit the index; while an unreadable item remains, leave `pending` so that every
    // check rebuilds and refuses.
    guard catalog.unreadable.isEmpty else { return }
    try writeIndex(cache, catalog, stamp: try itemsStamp(cache))
    try CacheFiles.unlink(cache, Self.pendingName)
  }

  private func writeItem(_ tmp: Int32, _ name: String, _ change: CacheChanges.Write)
    throws(SystemCallError)
  {
    let fd = try CacheFiles.createFile(tmp, name)
    defer { CacheFiles.close(fd) }
    let header = change.payload.withUnsafeBytes { payload in
      CacheFormat.itemHeader(writtenAt: change.writtenAt, payload: payload)
    }
    try CacheFiles.writeAll(fd, header)
    try CacheFiles.writeAll(fd, change.payload)
  }
}
