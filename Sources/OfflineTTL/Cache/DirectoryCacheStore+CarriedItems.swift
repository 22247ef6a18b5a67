/// What a sign-in carries of the old item set: only what a read would serve. Every old item the
/// sign-in does not write again is judged by the reader's own checks (the secure open, the
/// header against the file's size, the payload's CRC-32, or a sealed item's AEAD tags, its
/// generation and its store), and one a read would refuse is left out of the new set, removed
/// from `items/` and reported (`SignInReport` (SPI)).
extension DirectoryCacheStore {
  /// How a read judges one stored item.
  enum ItemJudgement {
    /// A read serves it, stamped `writtenAt`.
    case served(writtenAt: WallClockInstant)
    /// No file under its key.
    case absent
    /// A read refuses it with this error.
    case refused(StoreError)
  }

  /// The failed reads that say something about the item, not about the machine: a file the
  /// user cannot open (`EACCES`, `EPERM`), a device without its driver (`ENXIO`), a link
  /// (`ELOOP`), a file larger than any item (`EFBIG`). A read that fails otherwise (`EIO`,
  /// `ENOMEM`, `EMFILE`...) fails the sign-in instead: a passing failure never drops an item.
  static let refusingErrnos: Set<Errno> = [
    .permissionDenied, .notPermitted, .noDeviceOrAddress, .tooManySymbolicLinks, .fileTooLarge,
  ]

  /// `.refused(error)` for a read's refusal of the item `key`; throws the error back as a
  /// ``StoreFileError`` when it is a failed read that says nothing about the item.
  func judgement(of error: StoreError, _ key: CacheItemKey) throws(StoreFileError)
    -> ItemJudgement
  {
    if let number = error.errno, error.code == .itemUnreadable,
      !Self.refusingErrnos.contains(Errno(rawValue: number))
    {
      throw StoreFileError(
        .system(Errno(rawValue: number)),
        path: directory + "/\(Self.cacheName)/\(Self.itemsName)/\(key.rawValue)")
    }
    return .refused(error)
  }

  /// Judges the unsealed item `key` in the opened `items/` as ``item(forKey:)`` does: the
  /// secure open and the header against the file's size (``openCheckedItem(_:in:)``, which the
  /// streaming read shares), then the CRC-32 of the whole payload, read in pieces of at most
  /// 64 KiB. Changes nothing.
  ///
  /// - Throws: ``StoreFileError`` for a failed read that says nothing about the item.
  /// - Complexity: O(payload size) time, O(64 KiB) memory.
  func judgeItem(_ key: CacheItemKey, in items: StoreDirectory) throws(StoreFileError)
    -> ItemJudgement
  {
    do throws(StoreError) {
      guard let opened = try openCheckedItem(key, in: items) else { return .absent }
      defer { files.close(opened.file.fd) }
      try checkPayload(opened, key)
      return .served(writtenAt: opened.header.writtenAt)
    } catch {
      return try judgement(of: error, key)
    }
  }

  /// Judges the sealed item `key`, which the old index lists as `expected`, as a read does
  /// (``openSealedItem(_:in:listed:storeID:keys:)`` and the entry it must match). Changes
  /// nothing.
  ///
  /// - Throws: ``StoreFileError`` for a failed read that says nothing about the item.
  /// - Complexity: O(payload size): the item is authenticated and decrypted whole.
  func judgeSealedItem(
    _ key: CacheItemKey, in cache: StoreDirectory, expected: CacheSeal.Entry, storeID: [UInt8],
    keys: SealKeys
  ) throws(StoreFileError) -> ItemJudgement {
    do throws(StoreError) {
      guard
        let opened = try openSealedItem(
          key, in: cache, listed: true, storeID: storeID, keys: keys)
      else {
        return .refused(Self.listedButMissing(key))
      }
      guard opened.entry == expected else {
        return .refused(Self.entryMismatch(key, found: opened.entry, expected: expected))
      }
      return .served(writtenAt: opened.entry.writtenAt)
    } catch {
      return try judgement(of: error, key)
    }
  }

  /// A sealed index lists `key` but `items/` has no file under it.
  static func listedButMissing(_ key: CacheItemKey) -> StoreError {
    StoreError(
      code: .itemUnauthentic, key: key,
      message: "item \(key) is in the sealed index but its file is missing")
  }

  /// A sealed item that authenticates but is not the entry the index lists (a copy from another
  /// commit).
  static func entryMismatch(
    _ key: CacheItemKey, found: CacheSeal.Entry, expected: CacheSeal.Entry?
  ) -> StoreError {
    StoreError(
      code: .itemUnauthentic, key: key,
      message: "item \(key) is from generation \(found.generation), the index expects "
        + "\(expected.map { "\($0.generation)" } ?? "none") (a copy from another commit); left alone"
    )
  }

  /// Judges every item of `catalog` that the sign-in does not write again (`rewritten`) as a
  /// read would (``judgeItem(_:in:)``), in the opened `items/`. A served item keeps its entry,
  /// stamped with the `writtenAt` its header holds (what a read serves); one a read would refuse
  /// is taken out of the catalog and returned; an entry whose file is gone is taken out. The
  /// items a scan already found unreadable or insecure (`catalog.unreadable`, `.insecure`) are
  /// returned too.
  ///
  /// - Throws: ``StoreFileError`` for a failed read that says nothing about an item.
  /// - Complexity: O(total bytes carried): every carried payload is read once.
  func judgeCarried(
    _ catalog: inout CacheCatalog, in items: StoreDirectory, rewritten: Set<String>
  ) throws(StoreFileError) -> [SignInReport.Dropped] {
    var dropped: [SignInReport.Dropped] = []
    for name in catalog.entries.keys.sorted() where !rewritten.contains(name) {
      let key = CacheItemKey(validated: name)
      switch try judgeItem(key, in: items) {
      case .served(let writtenAt):
        catalog.entries[name] = writtenAt
      case .absent:
        catalog.entries[name] = nil
      case .refused(let error):
        catalog.entries[name] = nil
        dropped.append(SignInReport.Dropped(key: name, refusal: error))
      }
    }
    for (name, why) in catalog.insecure where !rewritten.contains(name) {
      dropped.append(
        SignInReport.Dropped(key: name, code: .insecureStore, reason: "item \(name): \(why)"))
    }
    for (name, why) in catalog.unreadable where !rewritten.contains(name) {
      let wrongType = why.contains("not a regular file") || why.contains("symbolic link")
      dropped.append(
        SignInReport.Dropped(
          key: name, code: wrongType ? .notARegularFile : .itemUnreadable,
          reason: "item \(CacheItemKey.quoted(name)) is unreadable (\(why))"))
    }
    return dropped
  }

  /// The live set an unsealed sign-in carries, judged: from the index when it agrees with
  /// `items/` (`fromConsistentIndex`), else from the item headers (an `items/` of this user
  /// without the owner's bits gets them back: this is the online path); then every item that
  /// `rewritten` does not name is judged as a read would (``judgeCarried(_:in:rewritten:)``).
  ///
  /// - Returns: The catalog of what is carried, whether it came from a consistent index, and
  ///   what is dropped.
  /// - Throws: ``StoreFileError`` when `items/` cannot be listed or a read fails in a way that
  ///   says nothing about an item.
  /// - Complexity: O(n) opens and O(total bytes carried) reads.
  func carriedSet(_ cache: StoreDirectory, rewritten: Set<String>) throws(StoreFileError)
    -> (catalog: CacheCatalog, fromConsistentIndex: Bool, dropped: [SignInReport.Dropped])
  {
    var catalog = CacheCatalog()
    var fromConsistentIndex = false
    if let indexed = readCatalog(cache) {
      catalog = indexed
      fromConsistentIndex = true
    } else {
      do {
        // Unreadable items and entries that are not items stay out of the catalog; the roll
        // forward removes them.
        catalog = try scanItems(cache, repairing: true)
      } catch  where error.isWrongType {
        // `items/` is not a directory: no item is readable; the roll forward replaces it.
        return (catalog, false, [])
      }
    }
    let items: StoreDirectory
    do {
      items = try files.openDirectory(cache, Self.itemsName, repairing: true)
    } catch  where error.errno == .noSuchFileOrDirectory || error.isWrongType {
      return (CacheCatalog(), false, [])
    }
    defer { files.close(items) }
    let dropped = try judgeCarried(&catalog, in: items, rewritten: rewritten)
    catalog.unreadable = [:]
    catalog.insecure = [:]
    return (catalog, fromConsistentIndex, dropped)
  }
}
