import Foundation

/// The sealed store's paths (``DirectoryCacheStore/sealing`` is set): every item encrypted and
/// bound to the store, its key, `writtenAt` and generation; the index MACed and bound to the
/// clock mark's generation and store id. A sealed index is never rebuilt offline: anything that
/// does not authenticate is refused with a typed reason and left in place, and only a commit (the
/// online session) re-seals.
extension DirectoryCacheStore {
  /// The mark store sharing this directory and key (the sealed index is bound to its record).
  var sealedMarks: FileClockMarkStore {
    FileClockMarkStore(atPath: directory, faults: raw.sys.faults, sealing: sealing)
  }

  /// ``sealedMarks`` with the subkeys this operation already loaded (one key load per operation).
  func sealedMarks(keys: SealKeys) -> FileClockMarkStore {
    var marks = sealedMarks
    marks.presetSealKeys = keys
    return marks
  }

  func sealKeys(creating: Bool) throws(StoreError) -> SealKeys {
    guard let sealing else { preconditionFailure("not a sealed store") }
    do {
      guard creating else { return SealKeys.of(try sealing.loadKey(forStoreAt: directory)) }
      try sealing.checkKeptOutside(storeDirectory: directory)
      return SealKeys.of(try sealing.loadOrCreateKey())
    } catch {
      throw StoreError(sealingKey: error, provider: sealing)
    }
  }

  /// The clock mark's generation and store id, which the index must carry.
  func markBinding(keys: SealKeys) throws(StoreError) -> (generation: UInt64, storeID: [UInt8]) {
    let (record, storeID) = try sealedMarks(keys: keys).readSealed()
    guard let storeID else { preconditionFailure("a sealed mark store returned no store id") }
    return (record.generation, storeID)
  }

  func indexFailure(_ failure: CacheSeal.Failure) -> StoreError {
    switch failure {
    case .unsealed:
      return StoreError(
        code: .sealMismatch,
        message: "the item index in \(directory) is not sealed, but this store expects a seal; "
          + "left alone until an online sign-in")
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
  /// and its body when `withBody`. Checks no binding.
  ///
  /// - Returns: The header and the index (with no entries unless `withBody`), or `nil` when
  ///   `set` has no index.
  /// - Throws: `index_unreadable` (I/O), `seal_mismatch`, `index_unauthentic`.
  func loadSealedIndex(_ set: FileDescriptor, keys: SealKeys, withBody: Bool) throws(StoreError)
    -> (header: CacheSeal.Header, index: CacheSeal.Index)?
  {
    let fd: FileDescriptor
    do {
      fd = try raw.openFile(set, Self.indexName, [.readOnly, .nonBlocking])
    } catch  where error == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw StoreError(
        code: .indexUnreadable, errno: error.rawValue,
        message: "cannot open the item index in \(directory): \(error)")
    }
    defer { raw.close(fd) }
    let header: CacheSeal.Header
    do {
      let bytes = try raw.read(fd, count: CacheSeal.indexHeaderSize, offset: 0)
      header = try CacheSeal.decodeIndexHeader(bytes, keys: keys).get()
    } catch let error as Errno {
      throw StoreError(
        code: .indexUnreadable, errno: error.rawValue,
        message: "cannot read the item index in \(directory): \(error)")
    } catch let failure as CacheSeal.Failure {
      throw indexFailure(failure)
    } catch {
      throw indexFailure(.unauthentic("\(error)"))
    }
    var index = CacheSeal.Index(
      entries: [:], generation: header.generation, storeID: header.storeID)
    if withBody && header.summary.count > 0 {
      guard header.bodyLength < UInt64(Int32.max) else {
        throw indexFailure(.unauthentic("its body length is implausible"))
      }
      do {
        let body = try raw.read(
          fd, count: Int(header.bodyLength), offset: Int64(CacheSeal.indexHeaderSize))
        index = try CacheSeal.decodeIndexBody(body, header: header, keys: keys).get()
      } catch let error as Errno {
        throw StoreError(
          code: .indexUnreadable, errno: error.rawValue,
          message: "cannot read the item index in \(directory): \(error)")
      } catch let failure as CacheSeal.Failure {
        throw indexFailure(failure)
      } catch {
        throw indexFailure(.unauthentic("\(error)"))
      }
    }
    return (header, index)
  }

  /// The verified item set of the clock mark's generation `generation` (the current one when
  /// `nil`), writing nothing.
  ///
  /// While `pending` exists, a staging `next-<g>` whose sealed index authenticates, is bound to
  /// exactly `g` = `generation` and names the mark's store is that set (a committed sign-in whose
  /// roll forward is not finished). Otherwise the live index must authenticate and be bound to
  /// `generation` and the mark's store. A store with no index and no items is empty.
  ///
  /// - Returns: The header, the index (entries only when `withBody`) and the staging's name when
  ///   the set is staged; `nil` for an empty store.
  /// - Throws: The mark's failure (`mark_unauthentic`, `seal_mismatch`, ...), `seal_mismatch`,
  ///   `index_unauthentic`, `index_unreadable`.
  /// - Complexity: One read of the mark record and of the index header (O(1)); O(index) with
  ///   its body; while `pending` exists, one directory listing more.
  func sealedSet(
    _ cache: FileDescriptor, keys: SealKeys, generation: UInt64?, withBody: Bool
  ) throws(StoreError)
    -> (header: CacheSeal.Header, index: CacheSeal.Index, staging: String?)?
  {
    let binding = try markBinding(keys: keys)
    let generation = generation ?? binding.generation
    if (try? raw.exists(cache, Self.pendingName)) == true, let candidates = try? stagings(cache) {
      for staging in candidates where staging.generation == generation {
        guard let next = try? raw.openDirectory(cache, staging.name) else { continue }
        defer { raw.close(next) }
        if let (header, index) = try? loadSealedIndex(next, keys: keys, withBody: withBody),
          header.generation == generation, header.storeID == binding.storeID
        {
          return (header, index, staging.name)
        }
      }
    }
    guard let (header, index) = try loadSealedIndex(cache, keys: keys, withBody: withBody) else {
      if (try? itemsStamp(cache)) == DirectoryStamp() { return nil }
      throw indexFailure(.unauthentic("it is missing while items exist"))
    }
    guard header.generation == generation, header.storeID == binding.storeID else {
      throw indexFailure(
        .unauthentic(
          header.storeID == binding.storeID
            ? "it belongs to generation \(header.generation), the clock mark to \(generation)"
            : "it belongs to another store"))
    }
    return (header, index, nil)
  }

  /// ``summary()`` of a sealed store (for `generation`, or the mark's current one): the verified
  /// index header, bound to the clock mark.
  ///
  /// - Complexity: O(1): one 128-byte read and two MACs, plus one read of the clock mark.
  func sealedSummary(_ cache: FileDescriptor, generation: UInt64?) throws(StoreError)
    -> ItemTimeSummary
  {
    let keys = try sealKeys(creating: false)
    return try sealedSet(cache, keys: keys, generation: generation, withBody: false)?.header
      .summary ?? .empty
  }

  /// The bytes of `<set>/items/<key>`, or `nil` when there is no such file.
  private func sealedFile(_ set: FileDescriptor, _ key: CacheItemKey) throws(StoreError)
    -> [UInt8]?
  {
    do {
      let items = try raw.openDirectory(set, Self.itemsName)
      defer { raw.close(items) }
      let fd = try raw.openFile(items, key.rawValue, [.readOnly, .nonBlocking])
      defer { raw.close(fd) }
      let info = try raw.status(fd)
      guard info.kind == .regular else {
        throw StoreError(
          code: .itemUnreadable, key: key, message: "item \(key) is not a regular file; left alone")
      }
      return try raw.read(fd, count: Int(info.size), offset: 0)
    } catch let error as StoreError {
      throw error
    } catch let error as Errno where error == .noSuchFileOrDirectory {
      return nil
    } catch let error as Errno {
      throw unreadable(key, error)
    } catch {
      throw StoreError(code: .itemUnreadable, key: key, message: "\(error)")
    }
  }

  /// ``item(forKey:)`` of a sealed store (of the set of `generation`, or of the mark's current
  /// one): decrypts the item and checks it against the index entry (so an older or another
  /// store's copy of the item fails). A staged set's item is read from the staging while it is
  /// there, else from `items/` (renamed by the roll forward).
  ///
  /// - Complexity: O(payload + index).
  func sealedItem(_ cache: FileDescriptor, _ key: CacheItemKey, generation: UInt64?)
    throws(StoreError) -> CacheItem?
  {
    let keys = try sealKeys(creating: false)
    guard
      let (_, index, staging) = try sealedSet(
        cache, keys: keys, generation: generation, withBody: true)
    else { return nil }
    var bytes: [UInt8]?
    if let staging, let next = try? raw.openDirectory(cache, staging) {
      defer { raw.close(next) }
      bytes = try sealedFile(next, key)
    }
    if bytes == nil { bytes = try sealedFile(cache, key) }
    // A staged set's index is the whole set: a key it does not list is absent, even while the
    // roll forward has not yet removed its old file from `items/`.
    if staging != nil, index.entries[key.rawValue] == nil { return nil }
    guard let bytes else {
      guard index.entries[key.rawValue] == nil else {
        throw StoreError(
          code: .itemUnauthentic, key: key,
          message: "item \(key) is in the sealed index but its file is missing")
      }
      return nil
    }
    guard let expected = index.entries[key.rawValue] else {
      throw StoreError(
        code: .itemUnauthentic, key: key,
        message: "item \(key) is not in the sealed index; left alone")
    }
    switch CacheSeal.openItem(bytes, key: key.rawValue, storeID: index.storeID, keys: keys) {
    case .failure(.unsealed):
      throw StoreError(
        code: .sealMismatch, key: key,
        message: "item \(key) is not sealed, but this store expects a seal; left alone")
    case .failure(.otherKey), .failure(.unauthentic):
      throw StoreError(
        code: .itemUnauthentic, key: key,
        message: "item \(key) does not authenticate (altered, or from another key, name or "
          + "store); left alone")
    case .success(let opened):
      guard opened.entry == expected else {
        throw StoreError(
          code: .itemUnauthentic, key: key,
          message: "item \(key) is from generation \(opened.entry.generation), the index expects "
            + "\(expected.generation) (a copy from another commit); left alone")
      }
      return CacheItem(key: key, payload: opened.payload, writtenAt: opened.entry.writtenAt)
    }
  }

  /// ``keys()`` of a sealed store: the keys of the verified set of `generation` (the mark's
  /// generation when `nil`).
  func sealedKeys(_ cache: FileDescriptor, generation: UInt64? = nil) throws(StoreError)
    -> [CacheItemKey]
  {
    let keys = try sealKeys(creating: false)
    guard
      let (_, index, _) = try sealedSet(cache, keys: keys, generation: generation, withBody: true)
    else { return [] }
    return index.entries.keys.map { CacheItemKey(validated: $0) }.sorted()
  }

  /// The entries a sealed commit keeps: from the old index when it authenticates with this key
  /// and store id (the clock mark may be a generation ahead: the session reset it); otherwise
  /// every item file that authenticates, the others listed for removal (an unsealed store, a
  /// store under another key, forged files: the online session replaces what they held).
  ///
  /// - Complexity: O(index) when the old index authenticates, else O(total item bytes).
  func sealedCarriedEntries(
    _ cache: FileDescriptor, items: FileDescriptor, keys: SealKeys, storeID: [UInt8]
  ) throws(Errno) -> (entries: [String: CacheSeal.Entry], discard: [String]) {
    if let fd = try? raw.openFile(cache, Self.indexName, [.readOnly, .nonBlocking]) {
      defer { raw.close(fd) }
      if let bytes = try? raw.read(fd, count: CacheSeal.indexHeaderSize, offset: 0),
        case .success(let header) = CacheSeal.decodeIndexHeader(bytes, keys: keys),
        header.storeID == storeID, header.bodyLength < UInt64(Int32.max),
        let body = try? raw.read(
          fd, count: Int(header.bodyLength), offset: Int64(CacheSeal.indexHeaderSize)),
        case .success(let index) = CacheSeal.decodeIndexBody(body, header: header, keys: keys)
      {
        return (index.entries, [])
      }
    }
    var entries: [String: CacheSeal.Entry] = [:]
    var discard: [String] = []
    for name in try raw.names(in: items) {
      guard CacheItemKey.problem(with: name) == nil else { continue }
      // Only what was read and does not authenticate (or is no file at all) is discarded; a
      // failure to read fails the commit, so an I/O error never drops a genuine item.
      let fd: FileDescriptor
      do {
        fd = try raw.openFile(items, name, [.readOnly, .nonBlocking])
      } catch  where error == .noSuchFileOrDirectory {
        continue
      } catch
        where [.tooManySymbolicLinks, .permissionDenied, .notPermitted, .noDeviceOrAddress]
        .contains(error)
      {
        discard.append(name)
        continue
      }
      defer { raw.close(fd) }
      let info = try raw.status(fd)
      guard info.kind == .regular, info.size < Int64(Int32.max) else {
        discard.append(name)
        continue
      }
      let bytes = try raw.read(fd, count: Int(info.size), offset: 0)
      if case .success(let opened) = CacheSeal.openItem(
        bytes, key: name, storeID: storeID, keys: keys)
      {
        entries[name] = opened.entry
      } else {
        discard.append(name)
      }
    }
    return (entries, discard)
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
  func sealedApply(_ changes: CacheChanges, cache: StoreDirectory) throws(StoreError) {
    let keys = try sealKeys(creating: true)
    let binding = try markBinding(keys: keys)
    let name = Self.stagingPrefix + String(binding.generation)
    do throws(StoreFileError) {
      try reclaimSealedStaging(cache, keys: keys, storedGeneration: binding.generation)
    } catch {
      throw signInFailure(
        error, "sealed commit failed: cannot finish an earlier sign-in's staging",
        then: "nothing of this commit was written")
    }
    do throws(StoreFileError) {
      try stageSealed(
        changes, in: cache, named: name, generation: binding.generation,
        storeID: binding.storeID, keys: keys)
    } catch {
      try? removeStaging(cache, name)
      try? files.remove(cache, Self.pendingName)
      throw signInFailure(
        error, "sealed commit failed before its commit point",
        then: "nothing of it is visible and items already committed are intact")
    }
    do throws(StoreFileError) {
      try rollForwardSealed(cache, name, keys: keys)
    } catch {
      throw signInFailure(
        error, "the sealed commit is committed but its roll forward failed",
        then: "readers see the new items, the next commit or sign-in finishes it")
    }
  }
}
