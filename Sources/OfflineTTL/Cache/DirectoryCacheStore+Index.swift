/// Every item's `writtenAt` by key, as the writer keeps it in the index body.
struct CacheCatalog {
  var entries: [String: WallClockInstant] = [:]
  /// Items whose header could not be read during a scan; they are kept, and while any remain the
  /// index is not committed, so every check rebuilds and refuses with `item_unreadable`.
  var unreadable: [String: String] = [:]

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
  func itemsStamp(_ cache: FileDescriptor) throws(Errno) -> DirectoryStamp {
    do {
      let info = try files.status(cache, Self.itemsName)
      return DirectoryStamp(
        inode: info.inode, changeTime: info.changeTimeNanoseconds,
        modificationTime: info.modificationTimeNanoseconds)
    } catch  where error == .noSuchFileOrDirectory {
      return DirectoryStamp()
    }
  }

  /// The index header when the index is present, valid and consistent with the items directory;
  /// `nil` when it must be rebuilt.
  ///
  /// - Complexity: O(1): one `stat` for the pending marker, one 72-byte read, one `stat` of the
  ///   items directory.
  func fastIndexHeader(_ cache: FileDescriptor) -> CacheIndexHeader? {
    guard (try? files.exists(cache, Self.pendingName)) == false else { return nil }
    guard let fd = try? files.openFile(cache, Self.indexName, .readOnly) else {
      // No index: consistent only when there is no items directory at all.
      if (try? itemsStamp(cache)) == DirectoryStamp() { return emptyHeader }
      return nil
    }
    defer { files.close(fd) }
    guard let bytes = try? files.read(fd, count: CacheFormat.indexHeaderSize, offset: 0),
      let header = Self.decodeIndexHeader(bytes),
      let stamp = try? itemsStamp(cache), stamp == header.stamp
    else { return nil }
    return header
  }

  private var emptyHeader: CacheIndexHeader {
    CacheIndexHeader(summary: .empty, stamp: DirectoryStamp(), bodyLength: 0, bodyChecksum: 0)
  }

  static func decodeIndexHeader(_ bytes: [UInt8]) -> CacheIndexHeader? {
    guard bytes.count == CacheFormat.indexHeaderSize,
      Array(bytes[0..<4]) == CacheFormat.indexMagic,
      bytes.littleEndianUInt32(at: 4) == CacheFormat.version,
      CacheFormat.crc(bytes[0..<68]) == bytes.littleEndianUInt32(at: 68)
    else { return nil }
    let count = bytes.littleEndianUInt64(at: 8)
    let oldest = WallClockInstant(
      nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 16)))
    let newest = WallClockInstant(
      nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 24)))
    let summary: ItemTimeSummary
    if count == 0 {
      summary = .empty
    } else {
      guard count <= UInt64(Int.max),
        let bounded = try? ItemTimeSummary(count: Int(count), oldest: oldest, newest: newest)
      else { return nil }
      summary = bounded
    }
    return CacheIndexHeader(
      summary: summary,
      stamp: DirectoryStamp(
        inode: bytes.littleEndianUInt64(at: 32),
        changeTime: Int64(bitPattern: bytes.littleEndianUInt64(at: 40)),
        modificationTime: Int64(bitPattern: bytes.littleEndianUInt64(at: 48))),
      bodyLength: bytes.littleEndianUInt64(at: 56),
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

  /// The whole catalog from a consistent index, or `nil` when it must be rebuilt.
  func readCatalog(_ cache: FileDescriptor) -> CacheCatalog? {
    guard let header = fastIndexHeader(cache) else { return nil }
    if header.summary.count == 0 { return CacheCatalog() }
    guard let fd = try? files.openFile(cache, Self.indexName, .readOnly) else { return nil }
    defer { files.close(fd) }
    guard header.bodyLength < UInt64(Int.max / 2),
      let body = try? files.read(
        fd, count: Int(header.bodyLength), offset: Int64(CacheFormat.indexHeaderSize))
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

  /// Reads every item's header (never a payload) to rebuild the catalog; changes no item.
  ///
  /// - Complexity: O(n) opens and 28-byte reads.
  func scanItems(_ cache: FileDescriptor) throws(Errno) -> CacheCatalog {
    var catalog = CacheCatalog()
    let items: FileDescriptor
    do {
      items = try files.openDirectory(cache, Self.itemsName)
    } catch  where error == .noSuchFileOrDirectory {
      return catalog
    }
    defer { files.close(items) }
    for name in try files.names(in: items) {
      guard CacheItemKey.problem(with: name) == nil else { continue }
      do {
        let fd = try files.openFile(items, name, .readOnly)
        defer { files.close(fd) }
        let info = try files.status(fd)
        guard (info.kind == .regular) else {
          catalog.unreadable[name] = "not a regular file"
          continue
        }
        let bytes = try files.read(fd, count: CacheFormat.itemHeaderSize, offset: 0)
        switch CacheFormat.decodeItemHeader(bytes) {
        case .success(let header):
          if UInt64(info.size) != UInt64(CacheFormat.itemHeaderSize) + header.payloadLength {
            catalog.unreadable[name] = "truncated"
          } else {
            catalog.entries[name] = header.writtenAt
          }
        case .failure(let problem):
          catalog.unreadable[name] = problem.rawValue
        }
      } catch {
        catalog.unreadable[name] =
          error == .tooManySymbolicLinks ? "a symbolic link (never followed)" : error.description
      }
    }
    return catalog
  }

  /// Rebuilds the index from the item headers under the writer lock (when the lock can be taken;
  /// a read-only store is rebuilt in memory only) and returns its summary.
  ///
  /// - Throws: ``CacheStoreError/Code/itemUnreadable`` when an item header cannot be read (the
  ///   index is then not written, so every later check rebuilds and refuses again).
  func rebuildIndex(_ cache: FileDescriptor) throws(CacheStoreError) -> CacheIndexHeader {
    let lock = try? files.openFile(cache, Self.lockName, [.readWrite, .create])
    defer { if let lock { files.close(lock) } }
    var locked = false
    if let lock {
      locked = (try? files.lockExclusive(lock)) != nil
      // A writer may have just finished: its index is then consistent.
      if locked, let header = fastIndexHeader(cache) { return header }
    }
    let catalog: CacheCatalog
    let stamp: DirectoryStamp
    do {
      stamp = try itemsStamp(cache)
      catalog = try scanItems(cache)
    } catch {
      throw CacheStoreError(
        code: .indexUnreadable, errno: error.rawValue,
        reason: "cannot rebuild the item index: \(error.description)")
    }
    if let (name, why) = catalog.unreadable.min(by: { $0.key < $1.key }) {
      throw CacheStoreError(
        code: .itemUnreadable, key: CacheItemKey(validated: name),
        reason: "item \(CacheItemKey.quoted(name)) is unreadable (\(why)); left alone"
          + (catalog.unreadable.count > 1 ? " (and \(catalog.unreadable.count - 1) more)" : ""))
    }
    if locked {
      try? writeIndex(cache, catalog, stamp: stamp)
      try? files.unlink(cache, Self.pendingName)
    }
    return CacheIndexHeader(
      summary: catalog.summary, stamp: stamp, bodyLength: 0, bodyChecksum: 0)
  }

  /// Writes the index durably: temp file, `fsync`, rename over `index`, `fsync` of `cache/`.
  func writeIndex(_ cache: FileDescriptor, _ catalog: CacheCatalog, stamp: DirectoryStamp)
    throws(Errno)
  {
    let tmp = try files.openOrCreateDirectory(cache, Self.tmpName)
    defer { files.close(tmp) }
    let bytes = Self.encodeIndex(catalog, stamp: stamp)
    let fd = try files.createFile(tmp, Self.indexName)
    do {
      try files.writeAll(fd, bytes)
      try files.sync(fd)
    } catch {
      files.close(fd)
      throw error
    }
    files.close(fd)
    try files.rename(tmp, Self.indexName, cache, Self.indexName)
    try files.sync(cache)
  }
}
