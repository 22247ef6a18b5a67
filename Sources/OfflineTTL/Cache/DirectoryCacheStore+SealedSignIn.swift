import Foundation

/// The all-or-nothing sign-in of a sealed store (`docs/sign-in-protocol.md`, section "Sealed
/// stores"): the same staging, commit point and roll forward as the unsealed sign-in, with every
/// staged file sealed for the generation the sign-in will commit.
///
/// - Staged items in `next-<g>/items/` are sealed with generation `g` (the generation the reset
///   will write) and the store id the mark record will carry; the staged index is sealed and
///   bound to `g`, that store id and the sign-in's random id (``SignInID``, which the reset
///   records in the mark record), and lists the whole new set. Readers use a staging only when
///   its index authenticates for exactly the mark's generation and sign-in id.
/// - The roll forward makes `items/` hold exactly the staged index's keys (it needs neither the
///   `deleted` list nor `removes-all`: a sealed staging does not write them), then writes the
///   live index bound to the generation the mark holds.
/// - `pending` is not authenticated, and needs not be: it only tells a reader to look for a
///   staging, and a staging is used only when its sealed index is bound to the mark's
///   generation and sign-in id. Removing `pending` makes readers use the live index (refused
///   while it is bound to an older generation); adding it makes them look for a staging that
///   authenticates (there is none, or it is the one they would use anyway). Either way nothing
///   unauthentic is read.
extension DirectoryCacheStore {
  /// ``commitSignIn(preparing:storedGeneration:commitPoint:)`` of a sealed store, under the
  /// writer lock; `prepare` is called after the stored generation was read and any earlier
  /// staging reclaimed.
  ///
  /// The key may be created (only the online path does). Stages even when the changes are empty:
  /// the reset moves the mark to a new generation, and the index must follow it. Every path is
  /// opened with the secure open (``SecureStoreFiles``), as in the unsealed sign-in, and it
  /// repairs the same way: whatever stands where `items/`, `tmp/`, `index`, `pending`, a
  /// staging or an item belongs and is of the wrong type is removed, never followed or waited
  /// on.
  ///
  /// - Throws: ``StoreError``: `insecure_store` (a store directory, `cache/`, `items/` or lock
  ///   another user can write), `writeFailed` (an item over 1 GiB, `EFBIG`, before anything is
  ///   written; or a failed step, before or after the commit point as the reason says), a key
  ///   failure, `lockFailed`, `lockTimedOut`, `storeUnusable`.
  /// Every old item the changes do not write again is judged as a read judges it (the secure
  /// open, the size, every AEAD tag, the generation and store it is bound to: the checks of
  /// ``sealedItem(_:_:generation:known:)``) and left out, removed and reported
  /// (`SignInReport` (SPI)) when a read would refuse it.
  ///
  /// - Complexity: O(total bytes carried + k) for k changed items: every old item carried is
  ///   authenticated and decrypted once; n `fstatat`s, one `syncfs`, a constant number of
  ///   `fsync`s.
  func sealedCommitSignIn(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    // One key for the whole sign-in: the staging and the mark reset of its commit point (the
    // mark store's load inside `commitPoint` returns this scope's key) are sealed with it.
    try SealingKeyScope.run { () throws(StoreError) -> Bool in
      try sealedCommitSignInInScope(
        preparing: prepare, storedGeneration: storedGeneration, commitPoint: commitPoint)
    }
  }

  private func sealedCommitSignInInScope(
    preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
    commitPoint: () -> Bool
  ) throws(StoreError) -> Bool {
    // A directory that is not a store's is refused before the key is looked up: a key made
    // for a refused sign-in (a key file, a keyring secret and the lock file its lookup makes
    // in its lock directory) would be left behind. Checked again under the writer lock.
    do {
      try refuseForeignDirectoryIfPresent()
    } catch {
      // A key file kept in the directory is an entry no store makes: when the directory is
      // refused, a key inside it is refused as what it is (`key_inside_store`). Read-only, and
      // only then: the key's load below checks its placement on every other path.
      try refuseKeyInsideStore()
      throw error
    }
    // The key before anything of the store: a sign-in refused for its key (kept inside the
    // store, unreadable, another user's, a link) makes no store directory, `cache/` or lock.
    var madeFirst: String?
    let keys = try sealKeys(creating: true, madeFirst: &madeFirst)
    // Every refusal below that says nothing was written says what the key step wrote first.
    return try withLockedCache(madeFirst: madeFirst) { cache throws(StoreError) -> Bool in
      let stored = try storedGeneration()
      // The sign-in id the record holds for `stored` (a record that cannot be authenticated, or
      // that moved past `stored`, commits no staging). A lock held past its limit ends the
      // sign-in here: taken for "no record", it would remove a committed staging whose roll
      // forward is not finished.
      let committed: ClockMarkRecord?
      let committedStoreID: [UInt8]?
      do throws(StoreError) {
        (committed, committedStoreID) = try sealedMarks(keys: keys).readSealed()
      } catch  where error.code == .lockTimedOut {
        throw error
      } catch {
        (committed, committedStoreID) = (nil, nil)
      }
      let committedSignIn: SignInID?? =
        committed.flatMap { $0.generation == stored ? .some($0.signInID) : nil }
      do throws(StoreFileError) {
        try reclaimSealedStaging(
          cache, keys: keys, storedGeneration: committedSignIn == nil ? nil : stored,
          signIn: committedSignIn ?? nil)
      } catch {
        throw signInFailure(
          error, "cannot reclaim an earlier sign-in's staging",
          then: Self.nothingWritten(madeFirst, "nothing of this sign-in was written"))
      }
      let changes = prepare()
      // The 1 GiB limit of every write path, before anything of this sign-in is written.
      try Self.checkPayloadSizes(changes, madeFirst: madeFirst)
      // Exactly the generation the reset will write: over a record this key cannot
      // authenticate (sealed with another key, unsealed, altered) the reset continues from the
      // salvaged generation, and a staging of any other generation is one no reader uses.
      let planned: UInt64
      if let stored {
        planned = ClockMarkRecord.generation(after: stored)
      } else {
        do throws(StoreError) {
          planned = try sealedMarks(keys: keys).generationOfNextSignIn()
        } catch  where error.code == .lockTimedOut {
          throw error
        } catch {
          planned = 1
        }
      }
      let name = Self.stagingPrefix + String(planned)
      // This sign-in's id (libsodium's `randombytes_buf`): its staged index is bound to it, and
      // its mark reset records it.
      let signIn = SignInID(bytes: Sodium.randomBytes(16)) ?? SignInID.random()
      // The store id the reset will keep (or, with no authentic slot, take from this staging).
      let storeID =
        sealedMarks.authenticStoreID(keys: keys)
        ?? (try? loadSealedIndex(cache, keys: keys, withBody: false))?.header.storeID
        ?? Sodium.randomBytes(MarkSeal.storeIDLength)
      // Old items are carried only from the live index committed with the authentic clock
      // mark: its store id and generation (none when the mark does not authenticate; read
      // without the lock when the locked read failed for the lock file's sake).
      let authentic =
        committed.flatMap { record in committedStoreID.map { (record.generation, $0) } }
        ?? sealedMarks.authenticGeneration(keys: keys)
      let carryingFrom = authentic?.1 == storeID ? authentic?.0 : nil
      do throws(StoreFileError) {
        try stageSealed(
          changes, in: cache, named: name, generation: planned, storeID: storeID,
          signIn: signIn, keys: keys, carryingFrom: carryingFrom,
          judgingCarried: true)
      } catch {
        try? removeStaging(cache, name)
        try? files.remove(cache, Self.pendingName)
        throw signInFailure(
          error, "cannot stage the sign-in's items", then: "the previous mark and items are intact")
      }
      guard SignInScope.$current.withValue(signIn, operation: commitPoint) else { return false }
      do throws(StoreFileError) {
        try rollForwardSealed(cache, name, keys: keys, signIn: signIn)
      } catch {
        throw signInFailure(
          error, "the sign-in is committed but its roll forward failed",
          then: "readers see the new items, the next sign-in finishes it")
      }
      return true
    }
  }

  /// Rolls forward the staging of exactly the stored generation and the sign-in id the record
  /// holds (a committed sign-in whose roll forward did not finish) and removes every other one,
  /// whatever its type. Stricter than the unsealed rule (`<=`): a staging of an older
  /// generation, even an authentic one, is never made live again; and a staging of the stored
  /// generation whose index is bound to another sign-in (a copy of a sign-in that never
  /// committed) does not authenticate, so the roll forward removes it.
  func reclaimSealedStaging(
    _ cache: StoreDirectory, keys: SealKeys, storedGeneration stored: UInt64?,
    signIn: SignInID?
  ) throws(StoreFileError) {
    for staging in try stagings(cache) {
      if let stored, staging.generation == stored {
        try rollForwardSealed(cache, staging.name, keys: keys, signIn: signIn)
      } else {
        try removeStaging(cache, staging.name)
      }
    }
  }

  /// Writes the sealed new set into `cache/<name>/`, creates `pending` (unless something
  /// already stands under its name), and makes both durable (a sign-in stages for the
  /// generation its reset will write; a session commit for the generation the mark holds).
  /// Every file is created with `O_CREAT | O_EXCL` after removing whatever stood under its
  /// name; a staging of the wrong type is replaced. Old items are carried only from a live
  /// index bound to `storeID` and `indexGeneration` (the authentic clock mark's generation the
  /// old set was committed under; `nil`: carry nothing), as
  /// ``sealedCarriedEntries(_:items:keys:storeID:indexGeneration:judgingEach:rewritten:)`` says.
  func stageSealed(
    _ changes: CacheChanges, in cache: StoreDirectory, named name: String, generation: UInt64,
    storeID: [UInt8], signIn: SignInID?, keys: SealKeys, carryingFrom indexGeneration: UInt64?,
    judgingCarried: Bool
  ) throws(StoreFileError) {
    var entries: [String: CacheSeal.Entry] = [:]
    if !changes.removesAll {
      // What a read would serve is carried; what it would refuse is left out (and removed by
      // the roll forward): the online sign-in replaces it. An `items/` that cannot be read
      // fails the staging (an I/O error never drops the items it holds); a missing one, or
      // something other than a directory in its place, holds nothing.
      do throws(StoreFileError) {
        let live = try files.openDirectory(cache, Self.itemsName, repairing: true)
        defer { files.close(live) }
        let written = Set(changes.entries.keys.map(\.rawValue))
        let carried = try sealedCarriedEntries(
          cache, items: live, keys: keys, storeID: storeID, indexGeneration: indexGeneration,
          judgingEach: judgingCarried, rewritten: written)
        entries = carried.entries
        // What is dropped and not written again is said to the caller.
        SignInReport.record(carried.dropped.filter { !written.contains($0.key) })
      } catch  where error.errno == .noSuchFileOrDirectory || error.isWrongType {}
    }
    let next = try files.openOrReplaceDirectory(cache, name)
    defer { files.close(next) }
    let items = try files.openOrReplaceDirectory(next, Self.itemsName)
    defer { files.close(items) }
    for (key, change) in changes.entries {
      guard let change else {
        entries[key.rawValue] = nil
        continue
      }
      let sealed = CacheSeal.sealItem(
        key: key.rawValue, payload: change.payload, writtenAt: change.writtenAt,
        generation: generation, storeID: storeID, keys: keys)
      try writeNewFile(items, key.rawValue, sealed)
      entries[key.rawValue] = CacheSeal.Entry(writtenAt: change.writtenAt, generation: generation)
    }
    try writeNewFile(
      next, Self.indexName,
      CacheSeal.encodeIndex(
        CacheSeal.Index(entries: entries, generation: generation, storeID: storeID), keys: keys,
        signIn: signIn))
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
  }

  /// Creates `name` in `directory` with `O_CREAT | O_EXCL` (mode 0600, after removing whatever
  /// stood under it) holding `bytes`; not synced.
  private func writeNewFile(_ directory: StoreDirectory, _ name: String, _ bytes: [UInt8])
    throws(StoreFileError)
  {
    let fd = try files.createFile(directory, name)
    defer { files.close(fd) }
    try files.writeAll(fd, bytes, path: directory.path(of: name))
  }

  /// Finishes a committed sealed sign-in, repairing the live set as the unsealed roll forward
  /// does: `items/` (replaced when it is not a directory) is made to hold exactly the staged
  /// index's keys, each a regular file (anything else under `items/` is removed, whatever its
  /// type; each staged item is renamed in, over whatever stood under its key; a listed key whose
  /// file is then missing or not a regular file is left out of the index), `tmp/` is replaced
  /// or emptied, then the live index is written bound to the generation the mark holds, the
  /// staging removed and `pending` removed. A staging that is not a private directory, or whose
  /// index does not authenticate bound to `signIn` (the sign-in id of the committed record), is
  /// removed instead. Idempotent: a crash at any point leaves it to be run again.
  ///
  /// - Complexity: O(n) `fstatat`s and one listing of `items/` for n items; no item is read.
  func rollForwardSealed(
    _ cache: StoreDirectory, _ name: String, keys: SealKeys, signIn: SignInID?
  ) throws(StoreFileError) {
    let next: StoreDirectory
    do {
      next = try files.openDirectory(cache, name)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return
    } catch  where error.isWrongType || error.isInsecure {
      return try removeStaging(cache, name)
    }
    defer { files.close(next) }
    guard let staged = try? loadSealedIndex(next, keys: keys, withBody: true, signIn: signIn)
    else {
      return try removeStaging(cache, name)
    }
    try markPending(cache)
    let items = try files.openOrReplaceDirectory(cache, Self.itemsName)
    defer { files.close(items) }
    for live in try files.names(in: items) where staged.index.entries[live] == nil {
      try files.remove(items, live)
    }
    do throws(StoreFileError) {
      let stagedItems = try files.openDirectory(next, Self.itemsName)
      defer { files.close(stagedItems) }
      for entry in try files.names(in: stagedItems) where staged.index.entries[entry] != nil {
        do throws(StoreFileError) {
          try files.rename(stagedItems, entry, items, entry)
        } catch {
          // A directory under the key (a rename cannot replace it): remove it and retry.
          guard let target = try? files.status(items, entry), target.kind != .regular else {
            throw error
          }
          try files.remove(items, entry)
          try files.rename(stagedItems, entry, items, entry)
        }
      }
    } catch  where error.errno == .noSuchFileOrDirectory || error.isWrongType {
      // No staged items directory (or something else in its place): nothing to rename.
    }
    // Only a private regular file is an item: a listed key whose file is missing, is a FIFO,
    // a directory, a link or a socket, or is another user's or writable by others (the offline
    // reads refuse it: `insecure_store`), is removed and left out of the live index.
    var entries = staged.index.entries
    for key in staged.index.entries.keys {
      let info: FileStatus?
      do {
        info = try files.status(items, key)
      } catch  where error.errno == .noSuchFileOrDirectory {
        info = nil
      }
      let isItem =
        info.map { info in
          info.kind == .regular
            && (try? files.secure.checkOwnership(info, path: items.path(of: key))) != nil
        } ?? false
      if !isItem {
        if info != nil { try files.remove(items, key) }
        entries[key] = nil
      }
    }
    try files.sync(items.fd, path: items.path)
    // Bound to the generation the mark holds now (the reset may have written a later one than
    // planned, over a record it could not read).
    let generation =
      (try? sealedMarks(keys: keys).readSealed().record.generation) ?? staged.header.generation
    try writeSealedIndex(
      cache,
      CacheSeal.encodeIndex(
        CacheSeal.Index(entries: entries, generation: generation, storeID: staged.header.storeID),
        keys: keys))
    try removeStaging(cache, name)
    try files.remove(cache, Self.pendingName)
    try files.sync(cache.fd, path: cache.path)
  }

  /// Writes the live sealed index durably (``CacheFiles/replaceDurably(_:in:with:through:)``),
  /// through a `tmp/` that is replaced when it is of the wrong type and emptied first.
  func writeSealedIndex(_ cache: StoreDirectory, _ bytes: [UInt8]) throws(StoreFileError) {
    let tmp = try files.openOrReplaceDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    for leftover in try files.names(in: tmp) { try files.remove(tmp, leftover) }
    try files.replaceDurably(Self.indexName, in: cache, with: bytes, through: tmp)
  }
}
