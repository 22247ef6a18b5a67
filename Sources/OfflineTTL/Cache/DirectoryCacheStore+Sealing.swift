import Foundation

/// The sealed store's paths (``DirectoryCacheStore/sealing`` is set): every item encrypted and
/// bound to the store, its key, `writtenAt` and generation; the index MACed and bound to the
/// clock mark's generation and store id. A sealed index is never rebuilt offline: anything that
/// does not authenticate is refused with a typed reason and left in place, and only a commit (the
/// online session) re-seals.
extension DirectoryCacheStore {
  /// The mark store sharing this directory and key (the sealed index is bound to its record).
  var sealedMarks: FileClockMarkStore {
    var marks = FileClockMarkStore(atPath: directory, faults: files.sys.faults, sealing: sealing)
    marks.lockTimeout = lockTimeout
    return marks
  }

  /// ``sealedMarks`` with the subkeys this operation already loaded (one key load per operation).
  func sealedMarks(keys: SealKeys) -> FileClockMarkStore {
    var marks = sealedMarks
    marks.presetSealKeys = keys
    return marks
  }

  /// The subkeys of this store's key: inside an operation's scope (``SealingKeyScope``), the
  /// key that operation loaded first, whichever store loaded it. A key file's subkeys that this
  /// store value resolved before are reused while they are what the provider would load
  /// (``ResolvedSealKeys``).
  ///
  /// - Parameter creating: Whether a missing key may be created (online sign-in only).
  func sealKeys(creating: Bool) throws(StoreError) -> SealKeys {
    var madeFirst: String?
    return try sealKeys(creating: creating, madeFirst: &madeFirst)
  }

  /// ``sealKeys(creating:)``, setting `madeFirst` to ``sealedKeyMadeFirst`` when the key was
  /// missing and the provider was asked to make it (which may write: the key, and the lock
  /// that serializes its creation).
  func sealKeys(creating: Bool, madeFirst: inout String?) throws(StoreError) -> SealKeys {
    // Named once per store value: a sealed store always has its name.
    guard let name = sealingScopeName else { preconditionFailure("not a sealed store") }
    // The operation's key, when it has one (no closure: the store value is not copied).
    if let kept = SealingKeyScope.kept(named: name) { return kept }
    return try SealingKeyScope.keys(named: name) { () throws(StoreError) -> SealKeys in
      guard let sealing else { preconditionFailure("not a sealed store") }
      do throws(SealingKeyError) {
        // The offline load first (placement checked, a remembered key reused); only a missing
        // key is created, and only on the online path.
        do throws(SealingKeyError) {
          guard let resolvedSealKeys else {
            return SealKeys.of(try sealing.loadKey(forStoreAt: directory))
          }
          return try resolvedSealKeys.keys { () throws(SealingKeyError) in
            try sealing.loadKey(forStoreAt: directory)
          }
        } catch  where creating && error.code == .missing {}
        try sealing.checkKeptOutside(storeDirectory: directory)
        madeFirst = sealedKeyMadeFirst
        return SealKeys.of(try sealing.loadOrCreateKey())
      } catch {
        throw StoreError(sealingKey: error, provider: sealing)
      }
    }
  }

  /// What a sealed sign-in made before the checks under the writer lock, when its key was
  /// missing: the key (or another sign-in made it in between), and what its provider makes to
  /// create it. A refusal under the lock says so instead of "nothing was written": a keyring
  /// provider's lock directory may be this very store directory (the command-line tool's is),
  /// made for the lock file.
  var sealedKeyMadeFirst: String {
    if let file = sealing as? FileSealingKeyProvider {
      return "before this check the sign-in made its missing sealing key, the key file "
        + "\(file.path) (or found it just made by another sign-in); it is kept for the next one"
    }
    let provider = sealing.map { String(describing: $0) } ?? "no provider"
    return "before this check the sign-in had its missing sealing key made (\(provider)), and"
      + " its provider may have made the lock file that serializes that (a keyring key's, in"
      + " its lock directory, made too when missing: it may be this store directory); the key"
      + " is kept for the next sign-in"
  }

  /// Refuses a sealing key kept inside this store's directory
  /// (``SealingKeyProvider/checkKeptOutside(storeDirectory:)``), making and reading no key: a
  /// sign-in checks it when it refuses a directory that is not a store yet, so that the key
  /// file, an entry no store makes, is reported as what it is (`key_inside_store`) and not as a
  /// foreign entry of that directory.
  ///
  /// - Throws: ``StoreError`` `key_unavailable` carrying `key_inside_store`.
  func refuseKeyInsideStore() throws(StoreError) {
    guard let sealing else { return }
    do throws(SealingKeyError) {
      try sealing.checkKeptOutside(storeDirectory: directory)
    } catch {
      throw StoreError(sealingKey: error, provider: sealing)
    }
  }

  /// The clock mark's generation and store id, which the index must carry (one read of the
  /// record under its shared lock).
  func markBinding(keys: SealKeys) throws(StoreError) -> MarkBinding {
    let (record, storeID) = try sealedMarks(keys: keys).readSealed()
    guard let storeID else { preconditionFailure("a sealed mark store returned no store id") }
    return MarkBinding(
      generation: record.generation, storeID: storeID, signInID: record.signInID)
  }

  func indexFailure(_ failure: CacheSeal.Failure) -> StoreError {
    switch failure {
    case .unsealed:
      return StoreError(
        code: .sealMismatch,
        message: "the item index in \(directory) carries no seal (never sealed, or its seal was"
          + " damaged), but this store expects one; left alone until an online sign-in")
    case .otherKey:
      return StoreError(
        code: .sealMismatch,
        message: "the item index in \(directory) is sealed with another key; left alone until "
          + "an online sign-in")
    case .unauthentic(let why):
      return StoreError(
        code: .indexUnauthentic,
        message: "the item index in \(directory) is not authentic: \(why); left alone until an "
          + "online sign-in")
    }
  }

  /// Reads and verifies the sealed index in `set` (`cache/` or a staging directory): its header,
  /// and its body when `withBody`. Checks no binding. The index is opened by the secure open
  /// (non-blocking, never following a link, type, owner and mode checked on the descriptor), and
  /// the body's length from the authenticated header must be the file's size from `fstat` before
  /// its buffer is allocated.
  ///
  /// A staging's index verifies only when `signIn` is the sign-in id it was sealed for
  /// (``CacheSeal/encodeIndex(_:keys:signIn:)``); the live index is read with `nil`.
  ///
  /// - Returns: The header and the index (with no entries unless `withBody`), or `nil` when
  ///   `set` has no index.
  /// - Throws: `not_a_regular_file` (a FIFO, socket, device, directory or link at `index`),
  ///   `insecure_store` (another user's, or writable by group or others), `index_unreadable`
  ///   (I/O), `seal_mismatch`, `index_unauthentic`.
  func loadSealedIndex(
    _ set: StoreDirectory, keys: SealKeys, withBody: Bool, signIn: SignInID? = nil
  ) throws(StoreError) -> (header: CacheSeal.Header, index: CacheSeal.Index)? {
    let file: OpenedStoreFile
    do {
      file = try files.openFile(set, Self.indexName, .readOnly)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw failure(error, .indexUnreadable)
    }
    defer { files.close(file.fd) }
    let path = set.path(of: Self.indexName)
    let header: CacheSeal.Header
    do {
      let bytes = try files.read(file.fd, count: CacheSeal.indexHeaderSize, offset: 0, path: path)
      header = try CacheSeal.decodeIndexHeader(bytes, keys: keys, signIn: signIn).get()
    } catch let error as StoreFileError {
      throw failure(error, .indexUnreadable)
    } catch let problem as CacheSeal.Failure {
      throw indexFailure(problem)
    } catch {
      throw indexFailure(.unauthentic("\(error)"))
    }
    var index = CacheSeal.Index(
      entries: [:], generation: header.generation, storeID: header.storeID)
    if withBody && header.summary.count > 0 {
      let size = file.status.size - Int64(CacheSeal.indexHeaderSize)
      guard header.bodyLength < UInt64(Int32.max), size >= 0, header.bodyLength == UInt64(size)
      else {
        throw indexFailure(
          .unauthentic("its body length (\(header.bodyLength)) is not the file's (\(size))"))
      }
      do {
        let body = try files.read(
          file.fd, count: Int(header.bodyLength), offset: Int64(CacheSeal.indexHeaderSize),
          path: path)
        index = try CacheSeal.decodeIndexBody(body, header: header, keys: keys).get()
      } catch let error as StoreFileError {
        throw failure(error, .indexUnreadable)
      } catch let problem as CacheSeal.Failure {
        throw indexFailure(problem)
      } catch {
        throw indexFailure(.unauthentic("\(error)"))
      }
    }
    return (header, index)
  }

  /// Refuses an `items/` directory that another user owns or that group or others may write
  /// (`insecure_store` naming it), as the unsealed store's summary does; a missing `items/`, or
  /// something else in its place, is left to the reads that meet it.
  ///
  /// - Complexity: One `fstatat`.
  func checkSealedItemsDirectory(_ cache: StoreDirectory) throws(StoreError) {
    do {
      _ = try itemsStamp(cache)
    } catch  where error.isInsecure {
      throw failure(error, .indexUnreadable)
    } catch {}
  }

  /// The verified item set of the clock mark's generation `generation` (the current one when
  /// `nil`), writing nothing.
  ///
  /// While `pending` exists, a staging `next-<g>` whose sealed index authenticates, is bound to
  /// exactly `g` = `generation` and names the mark's store is that set (a committed sign-in whose
  /// roll forward is not finished). Otherwise the live index must authenticate and be bound to
  /// `generation` and the mark's store. A store with no index and no item in `items/` is empty.
  ///
  /// The mark's generation and store id are read from the record (under its shared lock) unless
  /// the caller passes `known`: the binding of a decision that observed the record under its
  /// lock (the offline reader's), whose generation the caller confirms after the read. When the
  /// set is not bound to `known`, the record is read and the set judged against it as without
  /// `known`, so a binding that went stale only costs that read.
  ///
  /// The mark is read first and the index after it, without the item store's lock; when they
  /// disagree (another generation, or no index while items exist), a commit may have fallen
  /// between the two reads, so both are read again holding `cache/lock` shared
  /// (``withSharedCacheLock(_:_:)``), and only a disagreement found there is refused.
  /// `locked`: the caller holds that lock already (one look, against the record).
  ///
  /// - Returns: The header, the index (entries only when `withBody`) and the staging's name when
  ///   the set is staged; `nil` for an empty store.
  /// - Throws: The mark's failure (`mark_unauthentic`, `seal_mismatch`, ...), `seal_mismatch`,
  ///   `index_unauthentic`, `index_unreadable`, `not_a_regular_file`, `insecure_store` (the
  ///   index, `items/` or the staging of `generation` another user's or writable by others).
  /// - Complexity: One read of the mark record (none with `known`), one `fstatat` of `items/` and
  ///   one read of the index header (O(1)); O(index) with its body; while `pending` exists, one
  ///   directory listing more; all of it twice, plus one `flock`, on a disagreement.
  func sealedSet(
    _ cache: StoreDirectory, keys: SealKeys, generation: UInt64?, known: MarkBinding? = nil,
    withBody: Bool, locked: Bool = false
  ) throws(StoreError)
    -> (header: CacheSeal.Header, index: CacheSeal.Index, staging: String?)?
  {
    if locked {
      // The caller holds the shared lock already: one look is the answer.
      switch try sealedSetOnce(
        cache, keys: keys, generation: generation, known: nil, withBody: withBody)
      {
      case .set(let header, let index, let staging): return (header, index, staging)
      case .empty: return nil
      case .disagreement(let error): throw error
      }
    }
    var look = try sealedSetOnce(
      cache, keys: keys, generation: generation, known: known, withBody: withBody)
    if case .disagreement = look, known != nil {
      // A binding the caller held may be stale: judge the set against the record itself.
      look = try sealedSetOnce(
        cache, keys: keys, generation: generation, known: nil, withBody: withBody)
    }
    if case .disagreement = look {
      look = try withSharedCacheLock(cache) { () throws(StoreError) in
        try sealedSetOnce(cache, keys: keys, generation: generation, known: nil, withBody: withBody)
      }
    }
    switch look {
    case .set(let header, let index, let staging): return (header, index, staging)
    case .empty: return nil
    case .disagreement(let error): throw error
    }
  }

  /// One look at the set of ``sealedSet(_:keys:generation:known:withBody:locked:)``, with no lock of
  /// the item store: a disagreement is returned, not thrown.
  func sealedSetOnce(
    _ cache: StoreDirectory, keys: SealKeys, generation: UInt64?, known: MarkBinding?,
    withBody: Bool
  ) throws(StoreError) -> SealedSetRead {
    let binding: MarkBinding
    if let known { binding = known } else { binding = try markBinding(keys: keys) }
    reachSealedRead(.afterMarkBinding)
    let generation = generation ?? binding.generation
    try checkSealedItemsDirectory(cache)
    if (try? files.exists(cache, Self.pendingName)) == true, let candidates = try? stagings(cache) {
      for staging in candidates where staging.generation == generation {
        let next: StoreDirectory
        do {
          next = try files.openDirectory(cache, staging.name)
        } catch  where error.isInsecure {
          throw failure(error, .indexUnreadable)
        } catch {
          continue
        }
        defer { files.close(next) }
        let staged: (header: CacheSeal.Header, index: CacheSeal.Index)?
        do {
          // Bound to the sign-in of the record: a staging of another sign-in (a copy of one
          // that never committed) does not verify, and is never read.
          staged = try loadSealedIndex(
            next, keys: keys, withBody: withBody, signIn: binding.signInID)
        } catch  where error.code == .insecureStore {
          throw error
        } catch {
          staged = nil
        }
        if let staged, staged.header.generation == generation,
          staged.header.storeID == binding.storeID
        {
          return .set(header: staged.header, index: staged.index, staging: staging.name)
        }
      }
    }
    guard let (header, index) = try loadSealedIndex(cache, keys: keys, withBody: withBody) else {
      guard let stored = storedItemCount(cache) else {
        return .disagreement(
          indexFailure(
            .unauthentic("it is missing and \(cache.path(of: Self.itemsName)) cannot be listed")))
      }
      if stored == 0 { return .empty }
      return .disagreement(
        indexFailure(
          .unauthentic(
            "it is missing while \(stored) item file\(stored == 1 ? " is" : "s are") in "
              + cache.path(of: Self.itemsName))))
    }
    guard header.generation == generation, header.storeID == binding.storeID else {
      return .disagreement(
        indexFailure(
          .unauthentic(
            header.storeID != binding.storeID
              ? "it belongs to another store"
              : known == nil && generation == binding.generation
                ? "it belongs to generation \(header.generation), the clock mark to \(generation)"
                : "it belongs to generation \(header.generation), not to generation "
                  + "\(generation) that this read was judged at")))
    }
    return .set(header: header, index: index, staging: nil)
  }

  /// How many entries of `items/` are named like items (`0` when it is missing or empty), or
  /// `nil` when it cannot be listed.
  ///
  /// - Complexity: One directory listing.
  func storedItemCount(_ cache: StoreDirectory) -> Int? {
    let items: StoreDirectory
    do {
      items = try files.openDirectory(cache, Self.itemsName)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return 0
    } catch {
      return nil
    }
    defer { files.close(items) }
    return (try? files.names(in: items))?.filter { CacheItemKey.problem(with: $0) == nil }.count
  }

  /// ``summary()`` of a sealed store (for `generation`, or the mark's current one): the verified
  /// index header, bound to the clock mark.
  ///
  /// - Complexity: O(1): one 128-byte read and two MACs, plus one read of the clock mark.
  func sealedSummary(_ cache: StoreDirectory, generation: UInt64?) throws(StoreError)
    -> ItemTimeSummary
  {
    do {
      let keys = try sealKeys(creating: false)
      return try sealedSet(cache, keys: keys, generation: generation, withBody: false)?.header
        .summary ?? .empty
    } catch {
      if generation == nil, holdsNothingCommitted(cache) { return .empty }
      throw error
    }
  }

  /// Whether this sealed store holds nothing any sign-in committed: no clock-mark record (the
  /// reset that writes it is a sealed sign-in's commit point), no live index, and no item file
  /// in `items/`. What a first sign-in killed before its commit point leaves (a lock, a
  /// staging, `pending`, perhaps a key file or none) is then no cache at all (`unavailable`),
  /// not a store that fails to read; the next sign-in removes the staging. Asked only when a
  /// read failed, so a store that reads pays nothing for it.
  ///
  /// - Complexity: Three `fstatat`s and one listing of `items/`.
  func holdsNothingCommitted(_ cache: StoreDirectory) -> Bool {
    guard (try? files.exists(cache, Self.indexName)) == false, storedItemCount(cache) == 0,
      let store = try? files.openStore(directory, creating: false)
    else { return false }
    defer { files.close(store) }
    return (try? files.exists(store, FileClockMarkStore.recordFileName)) == false
  }

  /// ``summaryIfSettledDeferringBinding()`` of a sealed store: the verified index header's
  /// summary, its binding left to the caller; `nil` while `pending` exists; an empty or missing
  /// index is judged by ``sealedSummary(_:generation:)``, with no binding left.
  ///
  /// A long-lived store value's next checks read through kept descriptors
  /// (`keptSealedSummaryDeferringBinding()`).
  ///
  /// - Complexity: O(1): one `fstatat` of `items/`, one 128-byte read and its MAC.
  func sealedSummaryDeferringBinding(_ cache: StoreDirectory) throws(StoreError)
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
  {
    if (try? files.exists(cache, Self.pendingName)) == true { return nil }
    let keys: SealKeys
    do {
      keys = try sealKeys(creating: false)
    } catch {
      // No key (yet): a first sign-in that never committed holds nothing to summarize.
      if holdsNothingCommitted(cache) { return (.empty, nil) }
      throw error
    }
    try checkSealedItemsDirectory(cache)
    guard let (header, _) = try loadSealedIndex(cache, keys: keys, withBody: false),
      header.summary.count > 0
    else {
      // No index, or an empty one: nothing to observe the mark for; checked as before.
      return (try sealedSummary(cache, generation: nil), nil)
    }
    reachSealedRead(.afterDeferredIndex)
    // Served from a verified index: the next check of this store value may keep descriptors.
    kept.noteUsed()
    return (header.summary, MarkBinding(generation: header.generation, storeID: header.storeID))
  }

  /// ``item(forKey:)`` of a sealed store (of the set of `generation`, or of the mark's current
  /// one; bound to `known` when the caller holds a confirmed binding, see
  /// ``sealedSet(_:keys:generation:known:withBody:locked:)``): decrypts the item and checks it against
  /// the index entry (so an older or another store's copy of the item fails). A staged set's
  /// item is read from the staging while it is there, else from `items/` (renamed by the roll
  /// forward).
  ///
  /// - Complexity: O(payload + index).
  func sealedItem(
    _ cache: StoreDirectory, _ key: CacheItemKey, generation: UInt64?, known: MarkBinding? = nil
  ) throws(StoreError) -> CacheItem? {
    let keys = try sealKeys(creating: false)
    if case .item(let item) = try sealedItemOnce(
      cache, key, keys: keys, generation: generation, known: known, locked: false)
    {
      return item
    }
    // The mark, the index and the item disagree: a commit may have fallen between their reads.
    // Read all three again where no commit can (under the shared lock) before refusing.
    let locked = try withSharedCacheLock(cache) { () throws(StoreError) in
      try sealedItemOnce(cache, key, keys: keys, generation: generation, known: nil, locked: true)
    }
    switch locked {
    case .item(let item): return item
    case .disagreement(let error): throw error
    }
  }

  /// One read of ``sealedItem(_:_:generation:known:)``: a disagreement between the index and
  /// the item file (another generation's copy, a listed key with no file, a file the index does
  /// not list) is returned, not thrown, unless `locked` (the caller holds the shared lock, and
  /// it is the answer).
  func sealedItemOnce(
    _ cache: StoreDirectory, _ key: CacheItemKey, keys: SealKeys, generation: UInt64?,
    known: MarkBinding?, locked: Bool
  ) throws(StoreError) -> SealedItemRead {
    // The set is judged under the shared lock by sealedSet itself when it disagrees.
    guard
      let (_, index, staging) = try sealedSet(
        cache, keys: keys, generation: generation, known: known, withBody: true, locked: locked)
    else { return .item(nil) }
    reachSealedRead(.beforeItemFile)
    let expected = index.entries[key.rawValue]
    // A staged set's index is the whole set: a key it does not list is absent, even while the
    // roll forward has not yet removed its old file from `items/`.
    if staging != nil, expected == nil { return .item(nil) }
    var opened: (payload: Data, entry: CacheSeal.Entry)?
    if let staging {
      let next: StoreDirectory?
      do {
        next = try files.openDirectory(cache, staging)
      } catch  where error.isInsecure {
        throw failure(error, .itemUnreadable, key: key)
      } catch {
        next = nil
      }
      if let next {
        defer { files.close(next) }
        do {
          opened = try openSealedItem(
            key, in: next, listed: expected != nil, storeID: index.storeID, keys: keys)
        } catch  where !locked && error.code != .insecureStore {
          // Every commit of one generation stages under the same name: once this staging was
          // rolled forward, the next commit may be writing a new one there (an item file still
          // empty or partly written reads as unsealed or truncated). Read again under the lock.
          return .disagreement(error)
        }
      }
    }
    if opened == nil {
      do {
        opened = try openSealedItem(
          key, in: cache, listed: expected != nil, storeID: index.storeID, keys: keys)
      } catch  where !locked && expected == nil && error.code == .itemUnauthentic {
        // A file the index does not list: a roll forward may have renamed it in after the
        // index was read.
        return .disagreement(error)
      }
    }
    guard let opened else {
      guard expected == nil else {
        let error = Self.listedButMissing(key)
        if locked { throw error }
        return .disagreement(error)
      }
      return .item(nil)
    }
    guard opened.entry == expected else {
      let error = Self.entryMismatch(key, found: opened.entry, expected: expected)
      if locked { throw error }
      return .disagreement(error)
    }
    return .item(CacheItem(key: key, payload: opened.payload, writtenAt: opened.entry.writtenAt))
  }

  /// Reads, authenticates and decrypts `<set>/items/<key>`, or `nil` when there is no such
  /// file. `items/` and the item are opened by the secure open (non-blocking, never following a
  /// link, type, owner and mode checked on the descriptor). The 56-byte header is checked against
  /// the file's size first; then the tags (one per 64 KiB chunk, or one for a version-2 item),
  /// then the ciphertext into one buffer, authenticated and decrypted in place there chunk by
  /// chunk, and that buffer becomes the payload: no second copy.
  ///
  /// - Parameters:
  ///   - listed: Whether the index lists the key; a file it does not list is refused before
  ///     anything is read from it.
  /// - Throws: `not_a_regular_file`, `insecure_store`, `item_unreadable` (I/O; a file larger
  ///   than a sealed item of the 1 GiB maximum payload is `EFBIG` before anything is allocated),
  ///   `item_unauthentic` (not listed; altered, or from another key, name or store),
  ///   `seal_mismatch` (not sealed). The file is left alone.
  /// - Complexity: O(payload): one read of the file, one decryption in place.
  func openSealedItem(
    _ key: CacheItemKey, in set: StoreDirectory, listed: Bool, storeID: [UInt8], keys: SealKeys
  ) throws(StoreError) -> (payload: Data, entry: CacheSeal.Entry)? {
    let file: OpenedStoreFile
    let path: String
    do {
      let items = try files.openDirectory(set, Self.itemsName)
      defer { files.close(items) }
      path = items.path(of: key.rawValue)
      file = try files.openFile(items, key.rawValue, .readOnly)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw failure(error, .itemUnreadable, key: key)
    }
    defer { files.close(file.fd) }
    guard listed else {
      throw StoreError(
        code: .itemUnauthentic, key: key,
        message: "item \(key) is not in the sealed index; left alone")
    }
    guard file.status.size <= CacheSeal.maximumItemFileSize else {
      throw unreadable(key, .fileTooLarge)
    }
    let header: CacheSeal.ItemHeader
    do {
      let head = try files.read(
        file.fd, count: Int(Swift.min(file.status.size, Int64(CacheSeal.itemHeaderSize))),
        offset: 0, path: path)
      header = try CacheSeal.decodeItemHeader(head, fileSize: file.status.size).get()
    } catch let error as StoreFileError {
      throw failure(error, .itemUnreadable, key: key)
    } catch let problem as CacheSeal.Failure {
      throw itemFailure(key, problem)
    } catch {
      throw itemFailure(key, .unauthentic("\(error)"))
    }
    // The tags (the file's last 16 bytes per chunk) apart, so that the one buffer the
    // ciphertext is read into is exactly the payload's size and becomes the payload.
    let tags: [UInt8]
    do {
      tags = try files.read(
        file.fd, count: header.tagsLength,
        offset: Int64(CacheSeal.itemHeaderSize + header.payloadLength), path: path)
    } catch {
      throw failure(error, .itemUnreadable, key: key)
    }
    guard tags.count == header.tagsLength else {
      throw itemFailure(key, .unauthentic("truncated while it was read"))
    }
    // Read into memory that becomes the payload's own storage and decrypted there.
    let payload: Data?
    do {
      payload = try files.readPayload(
        file.fd, count: header.payloadLength, offset: Int64(CacheSeal.itemHeaderSize), path: path
      ) { ciphertext in
        tags.withUnsafeBytes { tags in
          CacheSeal.openPayloadInPlace(
            ciphertext, tags: tags, header: header, key: key.rawValue, storeID: storeID,
            keys: keys)
        }
      }
    } catch {
      throw failure(error, .itemUnreadable, key: key)
    }
    guard let payload else { throw itemFailure(key, .unauthentic(CacheSeal.notAuthentic)) }
    return (payload, header.entry)
  }

  /// The store error for a sealed item that does not open.
  func itemFailure(_ key: CacheItemKey, _ problem: CacheSeal.Failure) -> StoreError {
    switch problem {
    case .unsealed:
      return StoreError(
        code: .sealMismatch, key: key,
        message: "item \(key) carries no seal (never sealed, or its seal was damaged), but this"
          + " store expects one; left alone")
    case .otherKey, .unauthentic:
      return StoreError(
        code: .itemUnauthentic, key: key,
        message: "item \(key) does not authenticate (altered, or from another key, name or "
          + "store); left alone")
    }
  }

  /// ``keys()`` of a sealed store: the keys of the verified set of `generation` (the mark's
  /// generation when `nil`; bound to `known` as ``sealedItem(_:_:generation:known:)`` is).
  func sealedKeys(_ cache: StoreDirectory, generation: UInt64? = nil, known: MarkBinding? = nil)
    throws(StoreError) -> [CacheItemKey]
  {
    let keys = try sealKeys(creating: false)
    guard
      let (_, index, _) = try sealedSet(
        cache, keys: keys, generation: generation, known: known, withBody: true)
    else { return [] }
    return index.entries.keys.map { CacheItemKey(validated: $0) }.sorted()
  }

  /// The entries a sealed commit keeps: from the old index only when it authenticates with this
  /// key and is bound to `storeID` and to `indexGeneration`, the generation of the authentic
  /// clock mark the old set was committed under (the mark may be a generation ahead: a reset
  /// just moved it). Each item it lists is judged as a read judges it when `judgingEach` (a
  /// sign-in: the file, its tags, its generation and store;
  /// ``judgeSealedItem(_:in:expected:storeID:keys:)``), and those a read would refuse are
  /// dropped.
  ///
  /// Without such an index (none, one that does not authenticate, one of another generation or
  /// store, or no authentic clock mark: `indexGeneration` `nil`) nothing is carried, whatever
  /// the files in `items/` hold: a read refuses every one of them, and an item file that
  /// authenticates under this key may be a copy from an older commit or of an item signed out
  /// since (its own seal binds the generation it was committed under, and a carried item keeps
  /// that generation, so only the index tells the current copy from an old one). Each is
  /// reported without being read: as an item this key cannot authenticate when the old index
  /// shows a set this key cannot authenticate at all (an unsealed store sealed for the first
  /// time: `seal_mismatch`; a store under another key: `item_unauthentic`), otherwise as
  /// `index_unauthentic`. The online session replaces what they held. The index is opened by the
  /// secure open.
  ///
  /// - Returns: The entries carried, and the old items dropped with why.
  /// - Throws: ``StoreFileError`` when `items/` cannot be listed or an item cannot be read (an
  ///   I/O error never drops a genuine item: it fails the commit).
  /// - Complexity: O(total item bytes) when judging each item; O(index) otherwise, plus
  ///   O(names in `items/`) when nothing is carried.
  func sealedCarriedEntries(
    _ cache: StoreDirectory, items: StoreDirectory, keys: SealKeys, storeID: [UInt8],
    indexGeneration: UInt64?, judgingEach: Bool, rewritten: Set<String>
  ) throws(StoreFileError)
    -> (entries: [String: CacheSeal.Entry], dropped: [SignInReport.Dropped])
  {
    // A failed read that says nothing about the index (`EIO`, `ENOMEM`...) fails the commit:
    // a passing failure never drops the items it lists.
    let old: (header: CacheSeal.Header, index: CacheSeal.Index)?
    do throws(StoreError) {
      old = try loadSealedIndex(cache, keys: keys, withBody: true)
    } catch {
      if let number = error.errno, error.code == .indexUnreadable,
        !Self.refusingErrnos.contains(Errno(rawValue: number))
      {
        throw StoreFileError(.system(Errno(rawValue: number)), path: cache.path(of: Self.indexName))
      }
      old = nil
    }
    if let indexGeneration, let (header, index) = old,
      header.storeID == storeID, header.generation == indexGeneration
    {
      guard judgingEach else { return (index.entries, []) }
      var entries = index.entries
      var dropped: [SignInReport.Dropped] = []
      for (name, expected) in index.entries.sorted(by: { $0.key < $1.key })
      where !rewritten.contains(name) {
        let key = CacheItemKey(validated: name)
        let judged = try judgeSealedItem(
          key, in: cache, expected: expected, storeID: storeID, keys: keys)
        if case .refused(let error) = judged {
          entries[name] = nil
          dropped.append(SignInReport.Dropped(key: name, refusal: error))
        }
      }
      // A file the index does not list is refused by a read, and removed by the roll forward.
      for name in try files.names(in: items)
      where index.entries[name] == nil && !rewritten.contains(name)
        && CacheItemKey.problem(with: name) == nil
      {
        dropped.append(
          SignInReport.Dropped(
            key: name, code: .itemUnauthentic, reason: "item \(name) is not in the sealed index"))
      }
      return (entries, dropped)
    }
    // Nothing is carried without the current authentic index (see above), and nothing in
    // `items/` is read: what the old index says of this key tells which report each gets.
    let byKey: StoreError.Code?
    switch indexHeaderUnderKey(cache, keys: keys) {
    case .failure(.unsealed): byKey = .sealMismatch
    case .failure(.otherKey): byKey = .itemUnauthentic
    default: byKey = nil
    }
    let why =
      indexGeneration.map {
        "no authentic index of generation \($0) of this store lists it (a copy from another"
          + " commit, or an index removed, altered or replaced)"
      } ?? "the clock mark does not authenticate, so no index can vouch for it"
    var dropped: [SignInReport.Dropped] = []
    for name in try files.names(in: items)
    where !rewritten.contains(name) && CacheItemKey.problem(with: name) == nil {
      dropped.append(
        SignInReport.Dropped(
          key: name, code: byKey ?? .indexUnauthentic,
          reason: byKey != nil
            ? "item \(name) does not authenticate with this key" : "item \(name): \(why)",
          unauthenticatedByKey: byKey != nil))
    }
    return ([:], dropped)
  }

  /// The old index's header checked with `keys`: `.failure(.unsealed)` or `.failure(.otherKey)`
  /// tell an old set this key cannot authenticate at all (sealed for the first time, or under
  /// another key); anything else (no index, an altered one, one that authenticates) `nil` or
  /// the header.
  private func indexHeaderUnderKey(_ cache: StoreDirectory, keys: SealKeys)
    -> Result<CacheSeal.Header, CacheSeal.Failure>?
  {
    guard let file = try? files.openFile(cache, Self.indexName, .readOnly) else { return nil }
    defer { files.close(file.fd) }
    // A shorter file is read as it is: an unsealed index may be shorter than a sealed header.
    guard
      let bytes = try? files.read(
        file.fd, count: CacheSeal.indexHeaderSize, offset: 0,
        path: cache.path(of: Self.indexName))
    else { return nil }
    return CacheSeal.decodeIndexHeader(bytes, keys: keys)
  }

  /// The sealed commit (a session's writes, deletions, sign-out, or the re-seal after a reset),
  /// under the writer lock after the precondition: staged like a sign-in
  /// (`docs/sign-in-protocol.md`, "Sealed stores"), but for the generation the mark holds now.
  ///
  /// 1. A committed sign-in's staging is finished first (the live set is then the set of the
  ///    mark's generation `g`); any other staging is removed.
  /// 2. The whole new set is staged in `next-<g>/` (new items sealed with `g` and the mark's
  ///    store id, the index listing every key, bound to `g`), then `pending` is created and
  ///    everything is made durable with one `syncfs`. From then on a reader uses the staging
  ///    (its index authenticates for exactly the mark's generation): the commit point.
  /// 3. The roll forward renames the staged items in, removes the keys the new index does not
  ///    list, writes the live index, removes the staging and `pending`.
  ///
  /// A reader sees the whole old set or the whole new set, never an item that disagrees with the
  /// index it uses. A failure before the commit point removes the staging (nothing changed); a
  /// failure or crash after it leaves the staging, which readers use and the next commit or
  /// sign-in finishes. Empty changes are staged too: a reset moved the mark to a new
  /// generation, and the index follows it.
  ///
  /// - Complexity: O(n + k) for n stored and k changed items (O(total item bytes) when the live
  ///   index does not authenticate); one `syncfs`, a constant number of `fsync`s.
  func sealedApply(
    _ changes: CacheChanges, cache: StoreDirectory, afterReset: Bool = false,
    previousGeneration: UInt64? = nil
  ) throws(StoreError) {
    // Never creates the key: a commit needs the record a sign-in sealed with the existing one.
    let keys = try sealKeys(creating: false)
    let binding = try markBinding(keys: keys)
    // The old set is carried from the index of the mark's generation; after a reset, of the
    // generation the authentic mark held before it (none: nothing is carried).
    let carried = afterReset ? previousGeneration : binding.generation
    let name = Self.stagingPrefix + String(binding.generation)
    do throws(StoreFileError) {
      try reclaimSealedStaging(
        cache, keys: keys, storedGeneration: binding.generation, signIn: binding.signInID)
    } catch {
      throw signInFailure(
        error, "sealed commit failed: cannot finish an earlier sign-in's staging",
        then: "nothing of this commit was written")
    }
    do throws(StoreFileError) {
      try stageSealed(
        changes, in: cache, named: name, generation: binding.generation,
        storeID: binding.storeID, signIn: binding.signInID, keys: keys, carryingFrom: carried,
        judgingCarried: false)
    } catch {
      try? removeStaging(cache, name)
      try? files.remove(cache, Self.pendingName)
      throw signInFailure(
        error, "sealed commit failed before its commit point",
        then: "nothing of it is visible and items already committed are intact")
    }
    do throws(StoreFileError) {
      try rollForwardSealed(cache, name, keys: keys, signIn: binding.signInID)
    } catch {
      throw signInFailure(
        error, "the sealed commit is committed but its roll forward failed",
        then: "readers see the new items, the next commit or sign-in finishes it")
    }
  }
}
