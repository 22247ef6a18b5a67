/// Every item's `writtenAt` by key, as the writer keeps it in the index body.
struct CacheCatalog {
  var entries: [String: WallClockInstant] = [:]
  /// Items whose header could not be read during a scan; they are kept, and while any remain the
  /// index is not committed, so every check rebuilds and refuses with `item_unreadable`.
  var unreadable: [String: String] = [:]
  /// Items owned by another user or writable by others, met during a scan.
  var insecure: [String: String] = [:]

  var summary: ItemTimeSummary { ItemTimeSummary(writtenAt: entries.values) }
}

/// What identifies the state of the items directory: any entry added, removed or renamed in it
/// changes its ctime and mtime.
struct DirectoryStamp: Equatable {
  var inode: UInt64 = 0
  var changeTime: Int64 = 0
  var modificationTime: Int64 = 0
}

/// The fixed-size index header.
struct CacheIndexHeader {
  var summary: ItemTimeSummary
  var stamp: DirectoryStamp
  var bodyLength: UInt64
  var bodyChecksum: UInt32
}

extension DirectoryCacheStore {
  /// The items directory's stamp, from `fstatat` (never following): a missing directory is the
  /// empty stamp.
  ///
  /// - Throws: ``StoreFileError``: `insecure` when it is another user's or writable by others.
  func itemsStamp(_ cache: StoreDirectory) throws(StoreFileError) -> DirectoryStamp {
    let info: FileStatus
    do {
      info = try files.status(cache, Self.itemsName)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return DirectoryStamp()
    }
    if info.kind == .directory {
      try files.secure.checkOwnership(info, path: cache.path(of: Self.itemsName))
    }
    return DirectoryStamp(
      inode: info.inode, changeTime: info.changeTimeNanoseconds,
      modificationTime: info.modificationTimeNanoseconds)
  }

  /// The index header when the index is present, valid and consistent with the items directory;
  /// `nil` when it must be rebuilt (missing, not a regular file, wrong size, failing its
  /// checksum, out of bounds, or older than the items directory).
  ///
  /// - Throws: ``StoreError/Code/insecureStore`` when the index or the items directory is
  ///   another user's or writable by others.
  /// - Complexity: O(1): one `stat` for the pending marker, one open, `fstat` and 72-byte read,
  ///   one `stat` of the items directory.
  func fastIndexHeader(_ cache: StoreDirectory) throws(CacheStoreError) -> CacheIndexHeader? {
    guard (try? files.exists(cache, Self.pendingName)) == false else { return nil }
    let file: OpenedStoreFile
    do {
      file = try files.openFile(cache, Self.indexName, .readOnly)
    } catch  where error.isInsecure {
      throw failure(error, .indexUnreadable)
    } catch {
      // No usable index: consistent only when there is no items directory at all.
      if error.errno == .noSuchFileOrDirectory,
        (try? itemsStamp(cache)) == DirectoryStamp()
      {
        return emptyHeader
      }
      return nil
    }
    defer { files.close(file.fd) }
    guard file.status.size >= Int64(CacheFormat.indexHeaderSize),
      let bytes = try? files.read(
        file.fd, count: CacheFormat.indexHeaderSize, offset: 0, path: cache.path(of: Self.indexName)
      ),
      let header = Self.decodeIndexHeader(bytes),
      UInt64(file.status.size) == UInt64(CacheFormat.indexHeaderSize) + header.bodyLength
    else { return nil }
    let stamp: DirectoryStamp
    do {
      stamp = try itemsStamp(cache)
    } catch  where error.isInsecure {
      throw failure(error, .indexUnreadable)
    } catch {
      return nil
    }
    guard stamp == header.stamp else { return nil }
    return header
  }

  private var emptyHeader: CacheIndexHeader {
    CacheIndexHeader(summary: .empty, stamp: DirectoryStamp(), bodyLength: 0, bodyChecksum: 0)
  }

  /// Decodes the 72-byte index header, or `nil` when its magic, version or checksum fail or its
  /// count and body length are out of bounds (at most ``CacheFormat/maximumItemCount`` items,
  /// each body entry 10 to 264 bytes).
  static func decodeIndexHeader(_ bytes: [UInt8]) -> CacheIndexHeader? {
    guard bytes.count == CacheFormat.indexHeaderSize,
      Array(bytes[0..<4]) == CacheFormat.indexMagic,
      bytes.littleEndianUInt32(at: 4) == CacheFormat.version,
      CacheFormat.crc(bytes[0..<68]) == bytes.littleEndianUInt32(at: 68)
    else { return nil }
    let count = bytes.littleEndianUInt64(at: 8)
    let bodyLength = bytes.littleEndianUInt64(at: 56)
    guard count <= CacheFormat.maximumItemCount,
      bodyLength >= count * CacheFormat.minimumIndexEntrySize,
      bodyLength <= count * CacheFormat.maximumIndexEntrySize
    else { return nil }
    let oldest = WallClockInstant(
      nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 16)))
    let newest = WallClockInstant(
      nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 24)))
    let summary: ItemTimeSummary
    if count == 0 {
      summary = .empty
    } else {
      guard let bounded = try? ItemTimeSummary(count: Int(count), oldest: oldest, newest: newest)
      else { return nil }
      summary = bounded
    }
    return CacheIndexHeader(
      summary: summary,
      stamp: DirectoryStamp(
        inode: bytes.littleEndianUInt64(at: 32),
        changeTime: Int64(bitPattern: bytes.littleEndianUInt64(at: 40)),
        modificationTime: Int64(bitPattern: bytes.littleEndianUInt64(at: 48))),
      bodyLength: bodyLength,
      bodyChecksum: bytes.littleEndianUInt32(at: 64))
  }

  static func encodeIndex(_ catalog: CacheCatalog, stamp: DirectoryStamp) -> [UInt8] {
    var body: [UInt8] = []
    body.reserveCapacity(catalog.entries.count * 32)
    for (key, writtenAt) in catalog.entries {
      body.appendLittleEndian(UInt64(bitPattern: writtenAt.nanosecondsSinceEpoch))
      let utf8 = Array(key.utf8)
      body.append(UInt8(utf8.count))
      body.append(contentsOf: utf8)
    }
    let summary = catalog.summary
    var header = CacheFormat.indexMagic
    header.appendLittleEndian(CacheFormat.version)
    header.appendLittleEndian(UInt64(summary.count))
    header.appendLittleEndian(UInt64(bitPattern: summary.oldest?.nanosecondsSinceEpoch ?? 0))
    header.appendLittleEndian(UInt64(bitPattern: summary.newest?.nanosecondsSinceEpoch ?? 0))
    header.appendLittleEndian(stamp.inode)
    header.appendLittleEndian(UInt64(bitPattern: stamp.changeTime))
    header.appendLittleEndian(UInt64(bitPattern: stamp.modificationTime))
    header.appendLittleEndian(UInt64(body.count))
    header.appendLittleEndian(CacheFormat.crc(body[...]))
    header.appendLittleEndian(CacheFormat.crc(header[...]))
    return header + body
  }

  /// The whole catalog from a consistent index, or `nil` when it must be rebuilt. The body's
  /// length was checked against the file's size when the header was read; every entry must
  /// hold a valid key, and their number must be the header's count.
  ///
  /// - Complexity: O(body length).
  func readCatalog(_ cache: StoreDirectory) -> CacheCatalog? {
    guard let header = try? fastIndexHeader(cache) else { return nil }
    if header.summary.count == 0 { return CacheCatalog() }
    guard let file = try? files.openFile(cache, Self.indexName, .readOnly) else { return nil }
    defer { files.close(file.fd) }
    guard
      UInt64(file.status.size) == UInt64(CacheFormat.indexHeaderSize) + header.bodyLength,
      let body = try? files.read(
        file.fd, count: Int(header.bodyLength), offset: Int64(CacheFormat.indexHeaderSize),
        path: cache.path(of: Self.indexName))
    else { return nil }
    return Self.decodeIndexBody(body, header: header)
  }

  /// The catalog in an index body that agrees with its header (length, checksum, count and
  /// summary), or `nil` when it must be rebuilt.
  ///
  /// - Complexity: O(n) in the body's length.
  static func decodeIndexBody(_ body: [UInt8], header: CacheIndexHeader) -> CacheCatalog? {
    guard UInt64(body.count) == header.bodyLength,
      CacheFormat.crc(body[...]) == header.bodyChecksum,
      let entries = decodeIndexBody(body), entries.count == header.summary.count
    else { return nil }
    let catalog = CacheCatalog(entries: entries)
    guard catalog.summary == header.summary else { return nil }
    return catalog
  }

  /// The entries of an index body (per item `writtenAt` `Int64`, key length `UInt8`, key), or
  /// `nil` when the body is malformed: cut short, or a key that is not valid UTF-8 or not a
  /// valid ``CacheItemKey`` (the writer never writes one; decoded with replacement characters it
  /// could exceed 255 bytes and stop the next commit from encoding the index).
  ///
  /// - Complexity: O(n) in the body's length.
  static func decodeIndexBody(_ body: [UInt8]) -> [String: WallClockInstant]? {
    var entries: [String: WallClockInstant] = [:]
    var offset = 0
    while offset < body.count {
      guard offset + 9 <= body.count else { return nil }
      let writtenAt = Int64(bitPattern: body.littleEndianUInt64(at: offset))
      let length = Int(body[offset + 8])
      offset += 9
      guard offset + length <= body.count else { return nil }
      guard let key = String(validating: body[offset..<offset + length], as: UTF8.self),
        CacheItemKey.problem(with: key) == nil
      else { return nil }
      offset += length
      entries[key] = WallClockInstant(nanosecondsSinceEpoch: writtenAt)
    }
    return entries
  }

  /// Reads every item's header (never a payload) to rebuild the catalog.
  ///
  /// - Parameter removingNonItems: `false` offline: nothing is changed, entries that are not
  ///   readable items are listed in the catalog. `true` only on the online path: every entry
  ///   that is not a readable item of this user (a name that is not a key, a FIFO, socket,
  ///   device, directory or link, another user's file, a wrong header or size) is removed.
  /// - Parameter repairing: `true` only on the online path: an `items/` of this user without
  ///   the owner's bits (0000, 0500, left by a umask) gets them back before it is listed.
  /// - Complexity: O(n) opens and 28-byte reads.
  func scanItems(
    _ cache: StoreDirectory, removingNonItems: Bool = false, repairing: Bool = false
  ) throws(StoreFileError) -> CacheCatalog {
    var catalog = CacheCatalog()
    let items: StoreDirectory
    do {
      items = try files.openDirectory(cache, Self.itemsName, repairing: repairing)
    } catch  where error.errno == .noSuchFileOrDirectory {
      return catalog
    }
    defer { files.close(items) }
    for name in try files.names(in: items) {
      guard CacheItemKey.problem(with: name) == nil else {
        if removingNonItems { try files.remove(items, name) }
        continue
      }
      var problem: String? = nil
      var insecure = false
      do {
        let file = try files.openFile(items, name, .readOnly)
        defer { files.close(file.fd) }
        let bytes = try files.read(
          file.fd, count: CacheFormat.itemHeaderSize, offset: 0, path: items.path(of: name))
        switch CacheFormat.decodeItemHeader(bytes) {
        case .success(let header):
          if let sizeProblem = CacheFormat.checkItemSize(header, fileSize: file.status.size) {
            problem = sizeProblem.rawValue
          } else {
            catalog.entries[name] = header.writtenAt
          }
        case .failure(let headerProblem):
          problem = headerProblem.rawValue
        }
      } catch {
        problem = error.description
        insecure = error.isInsecure
      }
      guard let problem else { continue }
      if removingNonItems {
        try files.remove(items, name)
      } else if insecure {
        catalog.insecure[name] = problem
      } else {
        catalog.unreadable[name] = problem
      }
    }
    return catalog
  }

  /// The summary of the live set from the item headers, in memory: the offline path never
  /// writes (it neither rewrites the index nor removes `pending`; only a sign-in or a session
  /// commit repairs them). When the writer lock exists it is held shared while the items are
  /// read, so a commit in progress finishes first (its index then serves on the fast path) and
  /// none starts during the scan; a lock that is missing or not a regular file is not waited
  /// for, and one held past ``lockTimeout`` is `lock_timed_out`. Changes nothing.
  ///
  /// - Throws: ``CacheStoreError``: `lock_timed_out`; `insecure_store` when an item or the lock
  ///   is another user's
  ///   or writable by others; `item_unreadable` (or `not_a_regular_file`) when an item header
  ///   cannot be read (every later check reads the items again and refuses again, until a
  ///   sign-in repairs the store).
  /// - Complexity: O(n) opens and 28-byte header reads, unless the index became consistent
  ///   while the lock was awaited.
  func summaryFromItems(_ cache: StoreDirectory) throws(CacheStoreError) -> CacheIndexHeader {
    var lock: OpenedStoreFile? = nil
    do {
      lock = try files.openFile(cache, Self.lockName, .readOnly)
    } catch  where error.isInsecure {
      throw failure(error, .lockFailed)
    } catch {}
    defer { if let lock { files.close(lock.fd) } }
    if let lock, try lockSharedUnlessTimedOut(lock, in: cache),
      let header = try fastIndexHeader(cache)
    {
      // A writer finished while the lock was awaited: its index is consistent.
      return header
    }
    let catalog: CacheCatalog
    let stamp: DirectoryStamp
    do {
      stamp = try itemsStamp(cache)
      catalog = try scanItems(cache)
    } catch  where error.isInsecure || error.isWrongType {
      throw failure(error, .indexUnreadable)
    } catch {
      throw CacheStoreError(
        code: .indexUnreadable, errno: error.errno?.rawValue,
        reason: "cannot read the item set: \(error)")
    }
    try refuseProblems(catalog)
    return CacheIndexHeader(
      summary: catalog.summary, stamp: stamp, bodyLength: 0, bodyChecksum: 0)
  }

  /// Refuses a scanned catalog that met an item it cannot trust: `insecure_store` first (an
  /// item another user owns or may write), then `not_a_regular_file` or `item_unreadable`
  /// naming the first such key (and how many more).
  func refuseProblems(_ catalog: CacheCatalog) throws(CacheStoreError) {
    if let (name, why) = catalog.insecure.min(by: { $0.key < $1.key }) {
      throw CacheStoreError(
        code: .insecureStore, key: CacheItemKey(validated: name),
        reason: why + Self.insecureAdvice)
    }
    if let (name, why) = catalog.unreadable.min(by: { $0.key < $1.key }) {
      throw CacheStoreError(
        code: why.contains("not a regular file") || why.contains("symbolic link")
          ? .notARegularFile : .itemUnreadable,
        key: CacheItemKey(validated: name),
        reason: "item \(CacheItemKey.quoted(name)) is unreadable (\(why)); left alone"
          + (catalog.unreadable.count > 1 ? " (and \(catalog.unreadable.count - 1) more)" : ""))
    }
  }

  /// Writes the index durably (``CacheFiles/replaceDurably(_:in:with:through:)``: temp file
  /// with `O_EXCL`, `fsync`, rename over `index`, `fsync` of `cache/`).
  func writeIndex(_ cache: StoreDirectory, _ catalog: CacheCatalog, stamp: DirectoryStamp)
    throws(StoreFileError)
  {
    let tmp = try files.openDirectory(cache, Self.tmpName, creating: true, repairing: true)
    defer { files.close(tmp) }
    try files.replaceDurably(
      Self.indexName, in: cache, with: Self.encodeIndex(catalog, stamp: stamp), through: tmp)
  }
}
