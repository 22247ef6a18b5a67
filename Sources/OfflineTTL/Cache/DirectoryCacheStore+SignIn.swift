import Foundation

/// The all-or-nothing sign-in (`docs/sign-in-protocol.md`): the new item set is staged whole in
/// `cache/next-<g>/`, the mark record's generation is the commit point, and the staging is rolled
/// forward (or, uncommitted, removed) by the sign-in itself or by the next one. Offline reads
/// never write: while `pending` exists they read the set of the mark's generation in memory.
///
/// Every path is opened with the secure open (``SecureStoreFiles``): nothing waits on a FIFO,
/// no link is followed, every length read from disk is bounded by the file's size and the
/// format's maximum. An offline read refuses what it cannot trust and changes nothing; the
/// sign-in (the online path) removes whatever stands where it does not belong, a staging of the
/// wrong type included, and repairs the item set after its commit point.
extension DirectoryCacheStore {
  static let stagingPrefix = "next-"
  static let deletedName = "deleted"
  static let removesAllName = "removes-all"
  /// The staging's sign-in id (``SignInID``, 16 bytes): only the mark record that holds the same
  /// id commits the staging.
  static let signInName = "sign-in"
  /// The largest `deleted` list a staging can hold: one key (at most 255 bytes) and a newline
  /// for each of at most ``CacheFormat/maximumItemCount`` items.
  static let maximumDeletedListSize = Int64(CacheFormat.maximumItemCount) * 256

  /// See ``CacheItemStore/commitSignIn(preparing:storedGeneration:commitPoint:)``.
  ///
  /// Under the writer lock: reads the stored generation `g` (`nil` → 0; when that read throws,
  /// the sign-in ends with its error, nothing staged or removed), reclaims any staging
  /// (a valid `next-<h>` with `h <= g` is committed and rolled forward; anything else, a
  /// `next-<h>` that is not a directory of this user included, is removed), asks `prepare` for
  /// the changes (stamped there, under the lock), judges every old item the changes do not
  /// write again as a read would (``item(forKey:)``'s checks: a regular file of this user, its
  /// size as its header says, its payload's CRC-32) and leaves out, deletes and reports
  /// (`SignInReport` (SPI)) each one a read would refuse, writes the whole new set to
  /// `next-<g+1>/` (the changed items, an index of every key, the deleted keys), creates
  /// `pending`, makes all of it
  /// durable with one `syncfs`, calls `commitPoint` (the mark reset),
  /// and rolls forward: renames the staged items into `items/`, unlinks deleted keys, syncs
  /// `items/`, repairs the live set (entries of `items/` that are not readable items of this
  /// user are removed; a `tmp/`, `items/` or `index` of the wrong type is replaced), writes the
  /// index, removes `pending` and the staging. A sign-in without changes stages nothing: it
  /// judges the old items before its commit point and removes the refused ones with the repair
  /// of the live set after it. When `commitPoint` returns `false` the
  /// staging and `pending` stay for the next sign-in to judge by the stored generation (the
  /// reset may have reached the disk although it failed).
  ///
  /// - Throws: ``StoreError``: `insecure_store` (a store directory, `cache/`, lock or staging
  ///   another user can write; nothing is written), `writeFailed` (an item over 1 GiB; a read
  ///   of an old item that failed in a way that says nothing about the item, `EIO` or `ENOMEM`
  ///   for instance, which never drops it; or a failed step, before or after the commit point
  ///   as the reason says), `lockFailed`, `storeUnusable`.
  /// - Complexity: O(total bytes carried + k) for k changed items: every old item carried is
  ///   read whole once, in 64 KiB pieces; one `syncfs` and a constant number of `fsync`s, not
  ///   one per item.
  public func commitSignIn(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    if sealing != nil {
      return try sealedCommitSignIn(
        preparing: prepare, storedGeneration: storedGeneration, commitPoint: commitPoint)
    }
    return try withLockedCache { cache throws(StoreError) -> Bool in
      let stored = try storedGeneration()
      do throws(StoreFileError) {
        try reclaimStaging(cache, storedGeneration: stored)
      } catch {
        throw signInFailure(
          error, "cannot reclaim an earlier sign-in's staging",
          then: "nothing of this sign-in was written")
      }
      let changes = prepare()
      try Self.checkPayloadSizes(changes)
      // This sign-in's id: its staging carries it, and its mark reset records it.
      let signIn = SignInID.random()
      if changes.isEmpty {
        // What a read would refuse is judged before the commit point (a failed read fails the
        // sign-in with nothing written), and removed by the repair after it.
        let dropped: [SignInReport.Dropped]
        do throws(StoreFileError) {
          dropped = try carriedSet(cache, rewritten: []).dropped
        } catch {
          throw signInFailure(
            error, "cannot judge the items the sign-in carries",
            then: "nothing of this sign-in was written")
        }
        SignInReport.record(dropped)
        guard SignInScope.$current.withValue(signIn, operation: commitPoint) else { return false }
        do throws(StoreFileError) {
          try repairLiveSet(cache, removing: dropped.map(\.key))
        } catch {
          throw signInFailure(
            error, "the sign-in is committed but the repair of its items failed",
            then: "the next sign-in repairs them")
        }
        return true
      }
      let planned = ClockMarkRecord.generation(after: stored ?? 0)
      let name = Self.stagingPrefix + String(planned)
      let staged: StagedSet
      do throws(StoreFileError) {
        staged = try stage(changes, in: cache, named: name, signIn: signIn)
      } catch {
        try? removeStaging(cache, name)
        try? files.remove(cache, Self.pendingName)
        throw signInFailure(
          error, "cannot stage the sign-in's items", then: "the previous mark and items are intact")
      }
      guard SignInScope.$current.withValue(signIn, operation: commitPoint) else { return false }
      do throws(StoreFileError) {
        try rollForward(cache, name, signIn: signIn, staged: staged)
      } catch {
        throw signInFailure(
          error, "the sign-in is committed but its roll forward failed",
          then: "readers see the new items, the next sign-in finishes it")
      }
      return true
    }
  }

  /// The store error for a failed step of the sign-in: `insecure_store` with the advice for an
  /// owner or mode, else `writeFailed` with the errno.
  func signInFailure(_ error: StoreFileError, _ what: String, then: String) -> StoreError {
    if error.isInsecure {
      return StoreError(
        code: .insecureStore, reason: "\(what): \(error); \(then)" + Self.insecureAdvice)
    }
    return StoreError(
      code: .writeFailed, errno: error.errno?.rawValue, reason: "\(what): \(error); \(then)")
  }

  /// The staging directories in `cache/` with their generations (whatever their file type).
  func stagings(_ cache: StoreDirectory) throws(StoreFileError)
    -> [(name: String, generation: UInt64)]
  {
    try files.names(in: cache).compactMap { name in
      guard name.hasPrefix(Self.stagingPrefix),
        let generation = UInt64(name.dropFirst(Self.stagingPrefix.count))
      else { return nil }
      return (name, generation)
    }
  }

  /// Rolls forward a committed staging (valid index, generation `<= stored`, and the sign-in id
  /// the mark record of this directory holds for `stored`: ``isCommitted(_:_:by:)``) and removes
  /// every other one (uncommitted, stale, unreadable, or not a private directory). With no
  /// stored generation every staging is removed.
  private func reclaimStaging(_ cache: StoreDirectory, storedGeneration stored: UInt64?)
    throws(StoreFileError)
  {
    let committed = stored.flatMap { committedSignIn(at: $0) }
    for staging in try stagings(cache) {
      if let stored, staging.generation <= stored, let committed,
        isCommitted(cache, staging.name, by: committed),
        ((try? stagedCatalog(cache, staging.name)) ?? nil) != nil
      {
        try rollForward(cache, staging.name, signIn: committed)
      } else {
        try removeStaging(cache, staging.name)
      }
    }
  }

  /// Creates `pending` unless something already stands under its name: readers only ask
  /// whether it exists, so an existing one (of whatever type) is never removed here, and no
  /// instant passes without it.
  func markPending(_ cache: StoreDirectory) throws(StoreFileError) {
    if try files.exists(cache, Self.pendingName) { return }
    files.close(try files.createFile(cache, Self.pendingName))
  }

  /// What a sign-in staged, kept in memory for its own roll forward (which then need not read
  /// the staging back, nor check the entries it wrote itself).
  struct StagedSet {
    /// The whole new set (the staged index's catalog).
    var catalog: CacheCatalog
    /// The keys written into the staging's `items/`, each a regular file this sign-in created.
    var written: [String]
    /// The keys deleted.
    var deleted: [String]
    /// Whether the live set was read from an index that agreed with `items/` (and the sign-in
    /// does not remove every item): then `items/` holds exactly the staged catalog's keys once
    /// the staged items are renamed in and the deleted ones unlinked.
    var fromConsistentIndex: Bool
  }

  /// Writes the new set into `cache/<name>/` with the sign-in's id, creates `pending`, and makes
  /// both durable.
  ///
  /// - Returns: What was staged.
  private func stage(
    _ changes: CacheChanges, in cache: StoreDirectory, named name: String, signIn: SignInID
  ) throws(StoreFileError) -> StagedSet {
    var catalog = CacheCatalog()
    var fromConsistentIndex = false
    var deleted: [String] = []
    if !changes.removesAll {
      // Only what a read would serve is carried: the rest is deleted by the roll forward, and
      // said to the caller.
      let carried = try carriedSet(
        cache, rewritten: Set(changes.entries.keys.map(\.rawValue)))
      catalog = carried.catalog
      fromConsistentIndex = carried.fromConsistentIndex
      deleted = carried.dropped.map(\.key)
      SignInReport.record(carried.dropped)
    } else {
      SignInReport.record([])
    }
    let next = try files.openOrReplaceDirectory(cache, name)
    defer { files.close(next) }
    let items = try files.openDirectory(next, Self.itemsName, creating: true, repairing: true)
    defer { files.close(items) }
    var written: [String] = []
    written.reserveCapacity(changes.entries.count)
    for (key, change) in changes.entries {
      if let change {
        try writeItem(items, key.rawValue, change)
        catalog.entries[key.rawValue] = change.writtenAt
        written.append(key.rawValue)
      } else {
        deleted.append(key.rawValue)
        catalog.entries[key.rawValue] = nil
      }
      catalog.unreadable[key.rawValue] = nil
    }
    // A sign-out within a sign-in deletes whatever else is live, unreadable items included.
    if changes.removesAll { files.close(try files.createFile(next, Self.removesAllName)) }
    // Keys never contain a control character, so one per line is unambiguous.
    try writeFile(next, Self.deletedName, Array(deleted.joined(separator: "\n").utf8))
    try writeFile(next, Self.signInName, signIn.bytes)
    try writeFile(next, Self.indexName, Self.encodeIndex(catalog, stamp: DirectoryStamp()))
    try markPending(cache)
    // One flush for the staged files, the index, the directories and `pending`.
    try files.syncFileSystem(cache.fd, path: cache.path)
    #if !os(Linux)
      for entry in try files.names(in: items) {
        let file = try files.openFile(items, entry, .readOnly)
        defer { files.close(file.fd) }
        try files.sync(file.fd, path: items.path(of: entry))
      }
      try files.sync(items.fd, path: items.path)
      try files.sync(next.fd, path: next.path)
      try files.sync(cache.fd, path: cache.path)
    #endif
    return StagedSet(
      catalog: catalog, written: written, deleted: deleted,
      fromConsistentIndex: fromConsistentIndex)
  }

  /// Creates `name` in `directory` exclusively (mode 0600) holding `bytes`; not synced.
  private func writeFile(_ directory: StoreDirectory, _ name: String, _ bytes: [UInt8])
    throws(StoreFileError)
  {
    let fd = try files.createFile(directory, name)
    defer { files.close(fd) }
    try files.writeAll(fd, bytes, path: directory.path(of: name))
  }

  /// The catalog a staging's index holds, when the staging is a directory of this user and its
  /// index a regular file whose length agrees with its `fstat` size, complete and with its
  /// checksums holding; `nil` otherwise.
  ///
  /// - Throws: ``StoreFileError`` only when the staging or its index is another user's or
  ///   writable by others (`insecure`).
  /// - Complexity: O(index size), bounded by the index format's maximum.
  func stagedCatalog(_ cache: StoreDirectory, _ name: String) throws(StoreFileError)
    -> CacheCatalog?
  {
    let next: StoreDirectory
    do {
      next = try files.openDirectory(cache, name)
    } catch  where error.isInsecure {
      throw error
    } catch {
      return nil
    }
    defer { files.close(next) }
    return try stagedCatalog(in: next)
  }

  /// ``stagedCatalog(_:_:)`` of the staging already opened as `next`.
  func stagedCatalog(in next: StoreDirectory) throws(StoreFileError) -> CacheCatalog? {
    let file: OpenedStoreFile
    do {
      file = try files.openFile(next, Self.indexName, .readOnly)
    } catch  where error.isInsecure {
      throw error
    } catch {
      return nil
    }
    defer { files.close(file.fd) }
    let path = next.path(of: Self.indexName)
    guard file.status.size >= Int64(CacheFormat.indexHeaderSize),
      let head = try? files.read(
        file.fd, count: CacheFormat.indexHeaderSize, offset: 0, path: path),
      let header = Self.decodeIndexHeader(head),
      UInt64(file.status.size) == UInt64(CacheFormat.indexHeaderSize) + header.bodyLength,
      let body = try? files.read(
        file.fd, count: Int(header.bodyLength), offset: Int64(CacheFormat.indexHeaderSize),
        path: path)
    else { return nil }
    return Self.decodeIndexBody(body, header: header)
  }

  /// The keys a staging's `deleted` list names (names that are not keys are skipped, so no
  /// entry outside `items/` can be named); `nil` when the list is there but cannot be trusted
  /// (not a regular file of this user, or longer than ``maximumDeletedListSize``).
  private func deletedKeys(_ next: StoreDirectory) -> [String]? {
    let file: OpenedStoreFile
    do {
      file = try files.openFile(next, Self.deletedName, .readOnly)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return []
    } catch {
      return nil
    }
    defer { files.close(file.fd) }
    guard file.status.size <= Self.maximumDeletedListSize,
      let bytes = try? files.read(
        file.fd, count: Int(file.status.size), offset: 0, path: next.path(of: Self.deletedName))
    else { return nil }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
      .filter { CacheItemKey.problem(with: $0) == nil }
  }

  /// Finishes a committed sign-in: unlinks the deleted keys, renames every staged item that is a
  /// regular file into `items/` (removing first whatever stands under the key and is not a
  /// regular file; a staged entry of another type is dropped with the staging), syncs
  /// `items/`, repairs the live set and writes the index, removes the staging and `pending`.
  /// Idempotent: a crash at any point leaves it to be run again. A staging that does not record
  /// `signIn` (``stagedSignIn(_:)``), or whose index is not valid, is removed instead.
  ///
  /// - Parameters:
  ///   - signIn: The id of the committed sign-in (the mark record's; `nil` for a record
  ///     without one, which commits only a staging without one).
  ///   - staged: What this process staged just now under the same lock, when the roll
  ///     forward follows its own commit point: the staging is then not read back, the entries it
  ///     wrote are renamed without a `stat` each, and, when the live set came from a consistent
  ///     index, the new index is written from the staged catalog once a listing of `items/`
  ///     shows exactly its keys (no item header is read). `nil` (a reclaim) checks everything.
  func rollForward(
    _ cache: StoreDirectory, _ name: String, signIn: SignInID?, staged: StagedSet? = nil
  ) throws(StoreFileError) {
    if let staged, staged.fromConsistentIndex {
      return try rollForwardStaged(cache, name, staged)
    }
    // The id and the catalog are read from the directory that is then rolled forward (one
    // open): a staging of another sign-in put in its place meanwhile is removed, not made live.
    guard let next = try? files.openDirectory(cache, name) else {
      return try removeStaging(cache, name)
    }
    defer { files.close(next) }
    guard (try? stagedSignIn(next)) == .some(signIn),
      let catalog = (try? stagedCatalog(in: next)) ?? nil
    else {
      return try removeStaging(cache, name)
    }
    try markPending(cache)
    let items = try files.openOrReplaceDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    let deleted = deletedKeys(next)
    let removesAll = try files.exists(next, Self.removesAllName)
    if deleted == nil || removesAll {
      // Everything live that the committed set does not hold goes (also when the list of
      // deleted keys cannot be trusted: the committed index is the whole set).
      for live in try files.names(in: items) where catalog.entries[live] == nil {
        try files.remove(items, live)
      }
    } else {
      for key in deleted ?? [] { try files.remove(items, key) }
    }
    do {
      let staged = try files.openDirectory(next, Self.itemsName)
      defer { files.close(staged) }
      for entry in try files.names(in: staged) {
        // Only a regular file is an item; anything else staged (a FIFO, a directory, a link)
        // is dropped with the staging, and the repair below leaves the key out of the index.
        guard (try? files.status(staged, entry))?.kind == .regular else { continue }
        if let target = try? files.status(items, entry), target.kind != .regular {
          try files.remove(items, entry)
        }
        try files.rename(staged, entry, items, entry)
      }
    } catch  where error.errno == .noSuchFileOrDirectory || error.isWrongType {
      // No staged items directory (or something else in its place): nothing to rename.
    }
    try files.sync(items.fd, path: items.path)
    try repairLiveSet(cache, leaving: name)
  }

  /// The roll forward of the sign-in that staged `staged` just now (see
  /// ``rollForward(_:_:staged:)``): unlinks the deleted keys, renames each written key into
  /// `items/` (removing first whatever stands under the key when the rename fails and it is not
  /// a regular file), syncs `items/`, and, when `items/` then lists exactly the staged catalog's
  /// keys, writes the index from that catalog, removes the staging and then `pending`; otherwise
  /// it repairs as a reclaim does (``repairLiveSet(_:leaving:)``).
  ///
  /// - Complexity: O(k) renames for k written items and one listing of `items/`; no item is
  ///   opened.
  private func rollForwardStaged(_ cache: StoreDirectory, _ name: String, _ staged: StagedSet)
    throws(StoreFileError)
  {
    try markPending(cache)
    let next = try files.openDirectory(cache, name)
    defer { files.close(next) }
    let items = try files.openOrReplaceDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    for key in staged.deleted { try files.remove(items, key) }
    if !staged.written.isEmpty {
      let stagedItems = try files.openDirectory(next, Self.itemsName)
      defer { files.close(stagedItems) }
      for key in staged.written {
        do {
          try files.rename(stagedItems, key, items, key)
        } catch {
          // A directory under the key (a rename cannot replace it): remove it and retry.
          guard let target = try? files.status(items, key), target.kind != .regular else {
            throw error
          }
          try files.remove(items, key)
          try files.rename(stagedItems, key, items, key)
        }
      }
    }
    try files.sync(items.fd, path: items.path)
    let tmp = try files.openOrReplaceDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    for leftover in try files.names(in: tmp) { try files.remove(tmp, leftover) }
    if let index = try? files.status(cache, Self.indexName), index.kind != .regular {
      try files.remove(cache, Self.indexName)
    }
    let live = try files.names(in: items)
    guard live.count == staged.catalog.entries.count,
      live.allSatisfy({ staged.catalog.entries[$0] != nil })
    else {
      return try repairLiveSet(cache, leaving: name)
    }
    try writeIndex(cache, staged.catalog, stamp: try itemsStamp(cache))
    try removeStaging(cache, name)
    try files.remove(cache, Self.pendingName)
    try files.sync(cache.fd, path: cache.path)
  }

  /// The online repair of the live set, under the writer lock: `tmp/` and `items/` are made
  /// directories again if something else stands there, `tmp/` is emptied, every entry of
  /// `items/` that is not a readable item of this user is removed, an index that is not a
  /// regular file is removed, and the index is written from the items found (unless it already
  /// agrees and no `pending` exists). Then the staging `leaving` (when given) and `pending` are
  /// removed, in that order: `pending` absent promises that no committed staging exists.
  ///
  ///
  /// - Parameter removing: Keys removed from `items/` first, whatever stands under them: the
  ///   items the sign-in judged a read would refuse (``carriedSet(_:rewritten:)``).
  /// - Complexity: O(n) opens and 28-byte header reads.
  func repairLiveSet(
    _ cache: StoreDirectory, leaving staging: String? = nil, removing: [String] = []
  ) throws(StoreFileError) {
    let tmp = try files.openOrReplaceDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    for leftover in try files.names(in: tmp) { try files.remove(tmp, leftover) }
    let items = try files.openOrReplaceDirectory(cache, Self.itemsName)
    do {
      defer { files.close(items) }
      for key in removing { try files.remove(items, key) }
    }
    if let index = try? files.status(cache, Self.indexName), index.kind != .regular {
      try files.remove(cache, Self.indexName)
    }
    let pending = try files.exists(cache, Self.pendingName)
    let indexed = pending ? nil : readCatalog(cache)
    let stampBefore = try itemsStamp(cache)
    let catalog = try scanItems(cache, removingNonItems: true, repairing: true)
    let stamp = try itemsStamp(cache)
    if staging != nil || indexed == nil || indexed?.entries != catalog.entries
      || stamp != stampBefore
    {
      try writeIndex(cache, catalog, stamp: stamp)
    }
    if let staging { try removeStaging(cache, staging) }
    if pending || staging != nil {
      try files.remove(cache, Self.pendingName)
      try files.sync(cache.fd, path: cache.path)
    }
  }

  /// Removes a staging: its index first (so that a half-removed staging is never valid), then
  /// its files and directories. Anything else under its name (a file, a FIFO, a link, a
  /// directory of the wrong mode) is removed whole, never followed.
  func removeStaging(_ cache: StoreDirectory, _ name: String) throws(StoreFileError) {
    let next: StoreDirectory
    do {
      next = try files.openDirectory(cache, name)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return
    } catch  where error.isWrongType || error.isInsecure {
      return try files.remove(cache, name)
    }
    defer { files.close(next) }
    try files.remove(next, Self.indexName)
    try files.sync(next.fd, path: next.path)
    for entry in try files.names(in: next) { try files.remove(next, entry) }
    do {
      try files.sys.removeDirectoryAt(cache.fd, name)
    } catch  where error == .noSuchFileOrDirectory {
    } catch {
      throw StoreFileError(.system(error), path: next.path)
    }
  }

  /// The committed staging of generation `generation` (the valid `next-<h>` with
  /// `h <= generation` whose sign-in id is the one the mark record of this directory holds, and
  /// that record still at `generation`: ``isCommitted(_:_:by:)``) and its catalog, while
  /// `pending` exists; `nil` otherwise. Any other staging is stale: never read, left in place
  /// for the next sign-in to remove.
  ///
  /// - Throws: ``StoreFileError`` when such a staging is another user's or writable by others.
  func committedStaging(_ cache: StoreDirectory, generation: UInt64) throws(StoreFileError)
    -> (name: String, catalog: CacheCatalog, signIn: SignInID?)?
  {
    guard (try? files.exists(cache, Self.pendingName)) == true,
      let candidates = try? stagings(cache), !candidates.isEmpty,
      let committed = committedSignIn(at: generation)
    else { return nil }
    for staging in candidates.sorted(by: { $0.generation > $1.generation })
    where staging.generation <= generation {
      // One open: the id and the catalog are read from the same directory.
      let next: StoreDirectory
      do {
        next = try files.openDirectory(cache, staging.name)
      } catch  where error.isInsecure {
        throw error
      } catch {
        continue
      }
      defer { files.close(next) }
      if try stagedSignIn(next) == .some(committed), let catalog = try stagedCatalog(in: next) {
        return (staging.name, catalog, committed)
      }
    }
    return nil
  }

  /// The unsealed mark store of this store directory, waiting for its lock as long as this
  /// store waits for its own (``lockTimeout``).
  var directoryMarks: FileClockMarkStore {
    var marks = FileClockMarkStore(atPath: directory, faults: files.sys.faults)
    marks.lockTimeout = lockTimeout
    return marks
  }

  /// The sign-in id that commits a staging at `generation`: the one the mark record of this
  /// store directory (the ``FileClockMarkStore`` sharing it, read as a reader reads it) holds
  /// when it is at `generation` (`.some(nil)` for a record without an id); `.some(nil)` also
  /// when the directory holds no record at all (this item store is used with another mark
  /// store: then, as before sign-in ids existed, a staging without an id of a generation up to
  /// the one the caller read is committed, and a staging with one never is); `nil` (nothing is
  /// committed) when the record cannot be read or is at another generation.
  func committedSignIn(at generation: UInt64) -> SignInID?? {
    do {
      let record = try directoryMarks.read()
      return record.generation == generation ? .some(record.signInID) : nil
    } catch  where error.code == .absent {
      return .some(nil)
    } catch {
      return nil
    }
  }

  /// Whether the staging `name` belongs to the sign-in that wrote `record`'s generation: its
  /// `sign-in` file holds exactly the record's ``ClockMarkRecord/signInID``. A staging without
  /// the file (written before sign-in ids existed) belongs only to a record without an id; a
  /// file that is not a private regular file of 16 bytes belongs to none.
  func isCommitted(_ cache: StoreDirectory, _ name: String, by signIn: SignInID?) -> Bool {
    guard let next = try? files.openDirectory(cache, name) else { return false }
    defer { files.close(next) }
    return (try? stagedSignIn(next)) == .some(signIn)
  }

  /// The sign-in id the opened staging `next` records: `.some(nil)` when it has no `sign-in`
  /// file (a staging written before sign-in ids existed), `nil` when the file is there but not a
  /// regular file of exactly 16 bytes (it then belongs to no sign-in).
  ///
  /// - Throws: ``StoreFileError`` when the file is another user's or writable by others
  ///   (`insecure`): a reader refuses it, as it refuses such a staged index.
  func stagedSignIn(_ next: StoreDirectory) throws(StoreFileError) -> SignInID?? {
    let file: OpenedStoreFile
    do {
      file = try files.openFile(next, Self.signInName, .readOnly)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return .some(nil)
    } catch  where error.isInsecure {
      throw error
    } catch {
      return nil
    }
    defer { files.close(file.fd) }
    guard file.status.size == 16,
      let bytes = try? files.read(
        file.fd, count: 16, offset: 0, path: next.path(of: Self.signInName)),
      let staged = SignInID(bytes: bytes)
    else { return nil }
    return .some(staged)
  }

  /// See ``CacheItemStore/summaryIfSettled()``: the fast path of ``summary()``, or the summary
  /// read from the item headers (in memory) when no sign-in staging exists; `nil` while a staging exists (the set then depends on the
  /// mark's generation: ask ``summary(forGeneration:)``). Never reclaims a staging.
  public func summaryIfSettled() throws(StoreError) -> ItemTimeSummary? {
    if let kept = keptSummary() { return kept }
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil {
      // A sealed set is bound to the mark's generation: while `pending` exists, ask for it.
      if (try? files.exists(cache, Self.pendingName)) == true { return nil }
      return try sealedSummary(cache, generation: nil)
    }
    if let fast = try fastIndexHeader(cache) {
      noteConsistentIndex()
      return fast.summary
    }
    try refuseSealedIndex(cache)
    if let staged = try? stagings(cache), !staged.isEmpty { return nil }
    return try summaryFromItems(cache).summary
  }

  /// See ``CacheItemStore/summaryIfSettledDeferringBinding()``. A sealed store with a non-empty
  /// index returns the verified index header's summary and leaves its binding (the mark record's
  /// generation and store id) to the caller, which observes the record anyway: the check then
  /// reads the record once, under the observation's lock, instead of twice. Every other case is
  /// ``summaryIfSettled()``.
  ///
  /// - Complexity: O(1): one 128-byte read and its MAC (sealed).
  public func summaryIfSettledDeferringBinding() throws(StoreError)
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
  {
    guard sealing != nil else { return try summaryIfSettled().map { ($0, nil) } }
    if let kept = keptSealedSummaryDeferringBinding() { return kept }
    guard let cache = try openCache() else { return (.empty, nil) }
    defer { files.close(cache) }
    return try sealedSummaryDeferringBinding(cache)
  }

  /// See ``CacheItemStore/summary(forGeneration:)``: the committed staging's summary when one
  /// exists for `generation`, else the live set's, computed in memory (nothing is written).
  ///
  /// - Throws: ``StoreError``: `insecure_store`, `not_a_regular_file`, `item_unreadable` or
  ///   `index_unreadable`, as ``summary()``.
  public func summary(forGeneration generation: UInt64) throws(StoreError) -> ItemTimeSummary {
    // No `pending` marker: no committed staging, the live set (what the kept read checks).
    if let kept = keptSummary() { return kept }
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil { return try sealedSummary(cache, generation: generation) }
    do {
      if let staged = try committedStaging(cache, generation: generation) {
        return staged.catalog.summary
      }
    } catch {
      throw failure(error, .indexUnreadable)
    }
    if let fast = try fastIndexHeader(cache) {
      noteConsistentIndex()
      return fast.summary
    }
    try refuseSealedIndex(cache)
    let catalog: CacheCatalog
    do {
      catalog = try scanItems(cache)
    } catch  where error.isInsecure || error.isWrongType {
      throw failure(error, .indexUnreadable)
    } catch {
      throw StoreError(
        code: .indexUnreadable, errno: error.errno?.rawValue,
        reason: "cannot read the item set: \(error)")
    }
    try refuseProblems(catalog)
    return catalog.summary
  }

  /// See ``CacheItemStore/item(forKey:generation:)``: from the committed staging of
  /// `generation` when one exists (a key not in its index is absent; a key already renamed is
  /// read from `items/`), else from the live set. Checked as ``item(forKey:)`` says.
  public func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError)
    -> CacheItem?
  {
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    if sealing != nil { return try sealedItem(cache, key, generation: generation) }
    let set = try committedSet(holding: key, generation: generation, in: cache)
    return try readCommitted(from: set, in: cache) { (directory) throws(StoreError) in
      try readItem(key, inSet: directory)
    }
  }

  /// See ``CacheItemStore/keys(forGeneration:)``: the keys of the committed staging of
  /// `generation` when one exists, else those of the live set (``keys()``).
  public func keys(forGeneration generation: UInt64) throws(StoreError) -> [CacheItemKey] {
    guard let cache = try openCache() else { return [] }
    defer { files.close(cache) }
    if sealing != nil { return try sealedKeys(cache, generation: generation) }
    do {
      if let staged = try committedStaging(cache, generation: generation) {
        return staged.catalog.entries.keys.map { CacheItemKey(validated: $0) }.sorted()
      }
    } catch {
      throw failure(error, .indexUnreadable)
    }
    return try keys()
  }
}
