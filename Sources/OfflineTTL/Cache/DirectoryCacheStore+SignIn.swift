import Foundation

/// The all-or-nothing sign-in (`docs/sign-in-protocol.md`): the new item set is staged whole in
/// `cache/next-<g>/`, the mark record's generation is the commit point, and the staging is rolled
/// forward (or, uncommitted, removed) by the sign-in itself or by the next one. Offline reads
/// never write: while `pending` exists they read the set of the mark's generation in memory.
extension DirectoryCacheStore {
  static let stagingPrefix = "next-"
  static let deletedName = "deleted"
  static let removesAllName = "removes-all"

  /// See ``CacheItemStore/commitSignIn(_:storedGeneration:commitPoint:)``.
  ///
  /// Under the writer lock: reads the stored generation `g` (`nil` → 0), reclaims any staging
  /// (a valid `next-<h>` with `h <= g` is committed and rolled forward; anything else is removed),
  /// writes the whole new set to `next-<g+1>/` (the changed items, an index of every key, the
  /// deleted keys), creates `pending`, makes all of it durable with one `syncfs`, calls
  /// `commitPoint` (the mark reset), and rolls forward: renames the staged items into `items/`,
  /// unlinks deleted keys, syncs `items/`, writes the index, removes `pending` and the staging.
  /// When `commitPoint` returns `false` the staging and `pending` stay for the next sign-in to
  /// judge by the stored generation (the reset may have reached the disk although it failed).
  ///
  /// - Complexity: O(n + k) for n stored and k changed items; one `syncfs` and a constant number
  ///   of `fsync`s, not one per item.
  public func commitSignIn(
    _ changes: CacheChanges, storedGeneration: () -> UInt64?, commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    if sealing != nil {
      return try sealedCommitSignIn(
        changes, storedGeneration: storedGeneration, commitPoint: commitPoint)
    }
    return try withLockedCache { cache throws(StoreError) -> Bool in
      let stored = storedGeneration()
      do throws(Errno) {
        try reclaimStaging(cache, storedGeneration: stored)
      } catch {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          reason: "cannot reclaim an earlier sign-in's staging: \(error.description);"
            + " nothing of this sign-in was written")
      }
      if changes.isEmpty {
        settlePending(cache)
        return commitPoint()
      }
      let planned = ClockMarkRecord.generation(after: stored ?? 0)
      let name = Self.stagingPrefix + String(planned)
      do throws(Errno) {
        try stage(changes, in: cache, named: name)
      } catch {
        try? removeStaging(cache, name)
        try? files.unlink(cache, Self.pendingName)
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          reason: "cannot stage the sign-in's items: \(error.description);"
            + " the previous mark and items are intact")
      }
      guard commitPoint() else { return false }
      do throws(Errno) {
        try rollForward(cache, name)
      } catch {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          reason: "the sign-in is committed but its roll forward failed: \(error.description);"
            + " readers see the new items, the next sign-in finishes it")
      }
      return true
    }
  }

  /// The staging directories in `cache/` with their generations.
  func stagings(_ cache: FileDescriptor) throws(Errno) -> [(name: String, generation: UInt64)] {
    try files.names(in: cache).compactMap { name in
      guard name.hasPrefix(Self.stagingPrefix),
        let generation = UInt64(name.dropFirst(Self.stagingPrefix.count))
      else { return nil }
      return (name, generation)
    }
  }

  /// Rolls forward a committed staging (valid index, generation `<= stored`) and removes every
  /// other one (uncommitted, or unreadable). With no stored generation every staging is removed.
  private func reclaimStaging(_ cache: FileDescriptor, storedGeneration stored: UInt64?)
    throws(Errno)
  {
    for staging in try stagings(cache) {
      if let stored, staging.generation <= stored, stagedCatalog(cache, staging.name) != nil {
        try rollForward(cache, staging.name)
      } else {
        try removeStaging(cache, staging.name)
      }
    }
  }

  /// After an uncommitted staging was removed, `pending` is left: when no staging remains,
  /// writes the index of `items/` (the set of the stored generation) and removes `pending`, as a
  /// roll forward would. Left as it is when an item is unreadable or a write fails (every check
  /// then rebuilds, as after any interrupted commit). Runs under the writer lock.
  ///
  /// - Complexity: O(n) item headers read, only while `pending` exists.
  private func settlePending(_ cache: FileDescriptor) {
    guard (try? files.exists(cache, Self.pendingName)) == true,
      let staged = try? stagings(cache), staged.isEmpty,
      let stamp = try? itemsStamp(cache), let catalog = try? scanItems(cache),
      catalog.unreadable.isEmpty
    else { return }
    do throws(Errno) {
      try writeIndex(cache, catalog, stamp: stamp)
      try files.unlink(cache, Self.pendingName)
      try files.sync(cache)
    } catch {
      return
    }
  }

  /// Writes the new set into `cache/<name>/`, creates `pending`, and makes both durable.
  private func stage(_ changes: CacheChanges, in cache: FileDescriptor, named name: String)
    throws(Errno)
  {
    var catalog = CacheCatalog()
    if !changes.removesAll {
      if let indexed = readCatalog(cache) {
        catalog = indexed
      } else {
        catalog = try scanItems(cache)
      }
    }
    let next = try files.openOrCreateDirectory(cache, name)
    defer { files.close(next) }
    let items = try files.openOrCreateDirectory(next, Self.itemsName)
    defer { files.close(items) }
    var deleted: [String] = []
    for (key, change) in changes.entries {
      if let change {
        try writeItem(items, key.rawValue, change)
        catalog.entries[key.rawValue] = change.writtenAt
      } else {
        deleted.append(key.rawValue)
        catalog.entries[key.rawValue] = nil
      }
      catalog.unreadable[key.rawValue] = nil
    }
    // A sign-out within a sign-in deletes whatever else is live, unreadable items included.
    if changes.removesAll { files.close(try files.createFile(next, Self.removesAllName)) }
    // Keys never contain a control character, so one per line is unambiguous.
    let deletedBytes = Array(deleted.joined(separator: "\n").utf8)
    let list = try files.createFile(next, Self.deletedName)
    do {
      try files.writeAll(list, deletedBytes)
    } catch {
      files.close(list)
      throw error
    }
    files.close(list)
    let index = try files.createFile(next, Self.indexName)
    do {
      try files.writeAll(index, Self.encodeIndex(catalog, stamp: DirectoryStamp()))
    } catch {
      files.close(index)
      throw error
    }
    files.close(index)
    files.close(try files.createFile(cache, Self.pendingName))
    // One flush for the staged files, the index, the directories and `pending`.
    try files.syncFileSystem(cache)
    #if !os(Linux)
      for entry in try files.names(in: items) {
        let fd = try files.openFile(items, entry, .readOnly)
        defer { files.close(fd) }
        try files.sync(fd)
      }
      try files.sync(items)
      try files.sync(next)
      try files.sync(cache)
    #endif
  }

  /// The catalog a staging's index holds, when the index is complete and its checksums hold.
  func stagedCatalog(_ cache: FileDescriptor, _ name: String) -> CacheCatalog? {
    guard let next = try? files.openDirectory(cache, name) else { return nil }
    defer { files.close(next) }
    guard let fd = try? files.openFile(next, Self.indexName, .readOnly) else { return nil }
    defer { files.close(fd) }
    guard let head = try? files.read(fd, count: CacheFormat.indexHeaderSize, offset: 0),
      let header = Self.decodeIndexHeader(head), header.bodyLength < UInt64(Int.max / 2),
      let body = try? files.read(
        fd, count: Int(header.bodyLength), offset: Int64(CacheFormat.indexHeaderSize))
    else { return nil }
    return Self.decodeIndexBody(body, header: header)
  }

  /// Finishes a committed sign-in: renames every staged item into `items/`, unlinks the deleted
  /// keys, syncs `items/`, writes the index, removes `pending` and the staging. Idempotent: a
  /// crash at any point leaves it to be run again.
  func rollForward(_ cache: FileDescriptor, _ name: String) throws(Errno) {
    guard let catalog = stagedCatalog(cache, name) else { return try removeStaging(cache, name) }
    files.close(try files.createFile(cache, Self.pendingName))
    let next = try files.openDirectory(cache, name)
    defer { files.close(next) }
    let items = try files.openOrCreateDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    var deleted: [String] = []
    if let list = try? files.openFile(next, Self.deletedName, .readOnly) {
      defer { files.close(list) }
      let size = try files.status(list).size
      let bytes = try files.read(list, count: Int(size), offset: 0)
      deleted = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }
    if try files.exists(next, Self.removesAllName) {
      for live in try files.names(in: items) where catalog.entries[live] == nil {
        try files.unlink(items, live)
      }
    } else {
      for key in deleted { try files.unlink(items, key) }
    }
    do {
      let staged = try files.openDirectory(next, Self.itemsName)
      defer { files.close(staged) }
      for entry in try files.names(in: staged) {
        try files.rename(staged, entry, items, entry)
      }
    } catch  where error == .noSuchFileOrDirectory {}
    try files.sync(items)
    // An unreadable item the sign-in kept is not in the index: leave `pending`, so that every
    // check rebuilds and refuses, as after any commit.
    let live = try files.names(in: items).filter { CacheItemKey.problem(with: $0) == nil }
    if live.count == catalog.entries.count {
      try writeIndex(cache, catalog, stamp: try itemsStamp(cache))
      try removeStaging(cache, name)
      try files.unlink(cache, Self.pendingName)
    } else {
      try removeStaging(cache, name)
    }
    try files.sync(cache)
  }

  /// Removes a staging: its index first (so that a half-removed staging is never valid), then
  /// its files and directories.
  func removeStaging(_ cache: FileDescriptor, _ name: String) throws(Errno) {
    let next: FileDescriptor
    do {
      next = try files.openDirectory(cache, name)
    } catch  where error == .noSuchFileOrDirectory {
      return
    }
    defer { files.close(next) }
    try files.unlink(next, Self.indexName)
    try files.sync(next)
    if let staged = try? files.openDirectory(next, Self.itemsName) {
      defer { files.close(staged) }
      for entry in try files.names(in: staged) { try files.unlink(staged, entry) }
      try removeDirectory(next, Self.itemsName)
    }
    for entry in try files.names(in: next) { try files.unlink(next, entry) }
    try removeDirectory(cache, name)
  }

  private func removeDirectory(_ parent: FileDescriptor, _ name: String) throws(Errno) {
    do {
      try files.sys.removeDirectoryAt(parent, name)
    } catch  where error == .noSuchFileOrDirectory {}
  }

  /// The committed staging of generation `generation` (the valid `next-<h>` with
  /// `h <= generation`) and its catalog, while `pending` exists; `nil` otherwise.
  func committedStaging(_ cache: FileDescriptor, generation: UInt64)
    -> (name: String, catalog: CacheCatalog)?
  {
    guard (try? files.exists(cache, Self.pendingName)) == true,
      let candidates = try? stagings(cache)
    else { return nil }
    for staging in candidates.sorted(by: { $0.generation > $1.generation })
    where staging.generation <= generation {
      if let catalog = stagedCatalog(cache, staging.name) { return (staging.name, catalog) }
    }
    return nil
  }

  /// See ``CacheItemStore/summaryIfSettled()``: the fast path of ``summary()``, or its rebuild
  /// when no sign-in staging exists; `nil` while a staging exists next to `pending` (the set
  /// then depends on the mark's generation: ask ``summary(forGeneration:)``).
  public func summaryIfSettled() throws(StoreError) -> ItemTimeSummary? {
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil {
      // A sealed set is bound to the mark's generation: while `pending` exists, ask for it.
      if (try? files.exists(cache, Self.pendingName)) == true { return nil }
      return try sealedSummary(cache, generation: nil)
    }
    if let fast = fastIndexHeader(cache) { return fast.summary }
    try refuseSealedIndex(cache)
    if let staged = try? stagings(cache), !staged.isEmpty { return nil }
    return try rebuildIndex(cache).summary
  }

  /// See ``CacheItemStore/summary(forGeneration:)``: the committed staging's summary when one
  /// exists for `generation`, else the live set's, computed in memory (nothing is written).
  public func summary(forGeneration generation: UInt64) throws(StoreError) -> ItemTimeSummary {
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil { return try sealedSummary(cache, generation: generation) }
    if let staged = committedStaging(cache, generation: generation) {
      return staged.catalog.summary
    }
    if let fast = fastIndexHeader(cache) { return fast.summary }
    try refuseSealedIndex(cache)
    let catalog: CacheCatalog
    do {
      catalog = try scanItems(cache)
    } catch {
      throw StoreError(
        code: .indexUnreadable, errno: error.rawValue,
        reason: "cannot read the item set: \(error.description)")
    }
    if let (name, why) = catalog.unreadable.min(by: { $0.key < $1.key }) {
      throw StoreError(
        code: .itemUnreadable, key: CacheItemKey(validated: name),
        reason: "item \(CacheItemKey.quoted(name)) is unreadable (\(why)); left alone")
    }
    return catalog.summary
  }

  /// See ``CacheItemStore/item(forKey:generation:)``: from the committed staging of
  /// `generation` when one exists (a key not in its index is absent; a key already renamed is
  /// read from `items/`), else from the live set.
  public func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError)
    -> CacheItem?
  {
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    if sealing != nil { return try sealedItem(cache, key, generation: generation) }
    if let staged = committedStaging(cache, generation: generation) {
      guard staged.catalog.entries[key.rawValue] != nil else { return nil }
      if let next = try? files.openDirectory(cache, staged.name),
        let item = try { () throws(StoreError) -> CacheItem? in
          defer { files.close(next) }
          return try readItem(key, inSet: next)
        }()
      {
        return item
      }
    }
    return try readItem(key, inSet: cache)
  }
}
