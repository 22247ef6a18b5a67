import Foundation

/// The all-or-nothing sign-in of a sealed store (`docs/sign-in-protocol.md`, section "Sealed
/// stores"): the same staging, commit point and roll forward as the unsealed sign-in, with every
/// staged file sealed for the generation the sign-in will commit.
///
/// - Staged items in `next-<g>/items/` are sealed with generation `g` (the generation the reset
///   will write) and the store id the mark record will carry; the staged index is sealed and
///   bound to `g` and that store id, and lists the whole new set. Readers use a staging only when
///   its index authenticates and is bound to exactly the mark's generation.
/// - The roll forward makes `items/` hold exactly the staged index's keys (it needs neither the
///   `deleted` list nor `removes-all`: a sealed staging does not write them), then writes the
///   live index bound to the generation the mark holds.
/// - `pending` is not authenticated, and needs not be: it only tells a reader to look for a
///   staging, and a staging is used only when its sealed index is bound to the mark's
///   generation. Removing `pending` makes readers use the live index (refused while it is bound
///   to an older generation); adding it makes them look for a staging that authenticates (there
///   is none, or it is the one they would use anyway). Either way nothing unauthentic is read.
extension DirectoryCacheStore {
  /// ``commitSignIn(_:storedGeneration:commitPoint:)`` of a sealed store, under the writer lock.
  ///
  /// The key may be created (only the online path does). Stages even when `changes` is empty:
  /// the reset moves the mark to a new generation, and the index must follow it.
  ///
  /// - Complexity: O(n + k) for n stored and k changed items (O(total item bytes) when the live
  ///   index does not authenticate); one `syncfs`, a constant number of `fsync`s.
  func sealedCommitSignIn(
    _ changes: CacheChanges, storedGeneration: () -> UInt64?, commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    try withLockedCache { locked throws(StoreError) -> Bool in
      let cache = locked.fd
      let stored = storedGeneration()
      let keys = try sealKeys(creating: true)
      do throws(Errno) {
        try reclaimSealedStaging(cache, keys: keys, storedGeneration: stored)
      } catch {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message: "cannot reclaim an earlier sign-in's staging: \(error.description);"
            + " nothing of this sign-in was written")
      }
      let planned = ClockMarkRecord.generation(after: stored ?? 0)
      let name = Self.stagingPrefix + String(planned)
      // The store id the reset will keep (or, with no authentic slot, take from this staging).
      let storeID =
        sealedMarks.authenticStoreID(keys: keys)
        ?? (try? loadSealedIndex(cache, keys: keys, withBody: false))?.header.storeID
        ?? Sodium.randomBytes(MarkSeal.storeIDLength)
      do throws(Errno) {
        try stageSealed(
          changes, in: cache, named: name, generation: planned, storeID: storeID, keys: keys)
      } catch {
        try? removeStaging(cache, name)
        try? raw.unlink(cache, Self.pendingName)
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message: "cannot stage the sign-in's items: \(error.description);"
            + " the previous mark and items are intact")
      }
      guard commitPoint() else { return false }
      do throws(Errno) {
        try rollForwardSealed(cache, name, keys: keys)
      } catch {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message: "the sign-in is committed but its roll forward failed: \(error.description);"
            + " readers see the new items, the next sign-in finishes it")
      }
      return true
    }
  }

  /// Rolls forward the staging of exactly the stored generation (a committed sign-in whose roll
  /// forward did not finish) and removes every other one. Stricter than the unsealed rule
  /// (`<=`): an older staging, even an authentic one, is never made live again.
  func reclaimSealedStaging(
    _ cache: FileDescriptor, keys: SealKeys, storedGeneration stored: UInt64?
  ) throws(Errno) {
    for staging in try stagings(cache) {
      if let stored, staging.generation == stored {
        try rollForwardSealed(cache, staging.name, keys: keys)
      } else {
        try removeStaging(cache, staging.name)
      }
    }
  }

  /// Writes the sealed new set into `cache/<name>/`, creates `pending`, and makes both durable
  /// (a sign-in stages for the generation its reset will write; a session commit for the
  /// generation the mark holds).
  func stageSealed(
    _ changes: CacheChanges, in cache: FileDescriptor, named name: String, generation: UInt64,
    storeID: [UInt8], keys: SealKeys
  ) throws(Errno) {
    var entries: [String: CacheSeal.Entry] = [:]
    if !changes.removesAll {
      // What authenticates is carried; what does not is left out (and removed by the roll
      // forward): the online sign-in replaces it. An `items/` that cannot be read fails the
      // staging (an I/O error never drops the items it holds); a missing one, or something
      // other than a directory in its place, holds nothing.
      do {
        let live = try raw.openDirectory(cache, Self.itemsName)
        defer { raw.close(live) }
        entries =
          try sealedCarriedEntries(cache, items: live, keys: keys, storeID: storeID).entries
      } catch
        where [.noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinks].contains(error)
      {}
    }
    let next = try raw.openOrCreateDirectory(cache, name)
    defer { raw.close(next) }
    let items = try raw.openOrCreateDirectory(next, Self.itemsName)
    defer { raw.close(items) }
    for (key, change) in changes.entries {
      guard let change else {
        entries[key.rawValue] = nil
        continue
      }
      let sealed = CacheSeal.sealItem(
        key: key.rawValue, payload: change.payload, writtenAt: change.writtenAt,
        generation: generation, storeID: storeID, keys: keys)
      let fd = try raw.createFile(items, key.rawValue)
      do {
        try raw.writeAll(fd, sealed)
      } catch {
        raw.close(fd)
        throw error
      }
      raw.close(fd)
      entries[key.rawValue] = CacheSeal.Entry(writtenAt: change.writtenAt, generation: generation)
    }
    let bytes = CacheSeal.encodeIndex(
      CacheSeal.Index(entries: entries, generation: generation, storeID: storeID), keys: keys)
    let index = try raw.createFile(next, Self.indexName)
    do {
      try raw.writeAll(index, bytes)
    } catch {
      raw.close(index)
      throw error
    }
    raw.close(index)
    raw.close(try raw.createFile(cache, Self.pendingName))
    // One flush for the staged files, the index, the directories and `pending`.
    try raw.syncFileSystem(cache)
    #if !os(Linux)
      for entry in try raw.names(in: items) {
        let fd = try raw.openFile(items, entry, .readOnly)
        defer { raw.close(fd) }
        try raw.sync(fd)
      }
      try raw.sync(items)
      try raw.sync(next)
      try raw.sync(cache)
    #endif
  }

  /// Finishes a committed sealed sign-in: `items/` is made to hold exactly the staged index's
  /// keys (a valid key name that is not in it is unlinked, each staged item renamed in), then the
  /// live index is written bound to the generation the mark holds, the staging removed and
  /// `pending` unlinked. A staging whose index does not authenticate is removed instead.
  /// Idempotent: a crash at any point leaves it to be run again.
  func rollForwardSealed(_ cache: FileDescriptor, _ name: String, keys: SealKeys) throws(Errno) {
    let staged: (header: CacheSeal.Header, index: CacheSeal.Index)
    do {
      let next = try raw.openDirectory(cache, name)
      defer { raw.close(next) }
      guard let loaded = try? loadSealedIndex(next, keys: keys, withBody: true) else {
        return try removeStaging(cache, name)
      }
      staged = loaded
    } catch  where error == .noSuchFileOrDirectory {
      return
    }
    raw.close(try raw.createFile(cache, Self.pendingName))
    let next = try raw.openDirectory(cache, name)
    defer { raw.close(next) }
    let items = try raw.openOrCreateDirectory(cache, Self.itemsName)
    defer { raw.close(items) }
    for live in try raw.names(in: items)
    where CacheItemKey.problem(with: live) == nil && staged.index.entries[live] == nil {
      try raw.unlink(items, live)
    }
    do {
      let stagedItems = try raw.openDirectory(next, Self.itemsName)
      defer { raw.close(stagedItems) }
      for entry in try raw.names(in: stagedItems) where staged.index.entries[entry] != nil {
        try raw.rename(stagedItems, entry, items, entry)
      }
    } catch  where error == .noSuchFileOrDirectory {}
    try raw.sync(items)
    // Bound to the generation the mark holds now (the reset may have written a later one than
    // planned, over a record it could not read).
    let generation =
      (try? sealedMarks(keys: keys).readSealed().record.generation) ?? staged.header.generation
    try writeSealedIndex(
      cache,
      CacheSeal.encodeIndex(
        CacheSeal.Index(
          entries: staged.index.entries, generation: generation,
          storeID: staged.header.storeID),
        keys: keys))
    try removeStaging(cache, name)
    try raw.unlink(cache, Self.pendingName)
    try raw.sync(cache)
  }

  /// Writes the live sealed index durably: temp file, `fsync`, rename over `index`, `fsync` of
  /// `cache/`.
  func writeSealedIndex(_ cache: FileDescriptor, _ bytes: [UInt8]) throws(Errno) {
    let tmp = try raw.openOrCreateDirectory(cache, Self.tmpName)
    defer { raw.close(tmp) }
    let fd = try raw.createFile(tmp, Self.indexName)
    do {
      try raw.writeAll(fd, bytes)
      try raw.sync(fd)
    } catch {
      raw.close(fd)
      throw error
    }
    raw.close(fd)
    try raw.rename(tmp, Self.indexName, cache, Self.indexName)
    try raw.sync(cache)
  }
}
