extension DirectoryCacheStore {
  /// See ``CacheItemStore/streamItem(forKey:generation:chunkSize:accept:chunk:)``.
  ///
  /// An unsealed item is read through one buffer of `chunkSize` bytes (never more than the
  /// payload), in two passes over the same open descriptor: the header is checked as
  /// ``item(forKey:)`` checks it (size against `fstat` and the 1 GiB maximum) and handed to
  /// `accept`; the first pass computes the CRC-32 of the whole payload and refuses a mismatch
  /// before any byte is handed out; the second pass hands the bytes to `chunk` and computes the
  /// CRC-32 again, so bytes changed in place between the passes (only another tool could do
  /// that: the store replaces items by rename) end the read with `item_unreadable`. A sealed
  /// item is authenticated and decrypted whole (every chunk), then handed out in chunks.
  ///
  /// - Complexity: O(payload size) time, two reads of the payload (the second from the page
  ///   cache); O(`chunkSize`) memory when unsealed.
  public func streamItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    if sealing != nil {
      return try streamWholeItem(
        forKey: key, generation: generation, chunkSize: chunkSize, accept: accept, chunk: chunk)
    }
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    // The set the generation committed, as item(forKey:generation:) chooses it.
    let set = try committedSet(holding: key, generation: generation, in: cache)
    return try readCommitted(from: set, in: cache) { directory in
      try streamItem(key, inSet: directory, chunkSize: chunkSize, accept: accept, chunk: chunk)
    }
  }

  /// Streams `key` from `<set>/items/<key>`; `nil` when it is not there.
  func streamItem(
    _ key: CacheItemKey, inSet set: StoreDirectory, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    guard let opened = try openCheckedItem(key, inSet: set) else { return nil }
    defer { files.close(opened.file.fd) }
    let header = opened.header
    let length = Int(header.payloadLength)
    let served = CacheItemHeader(key: key, writtenAt: header.writtenAt, size: length)
    try accept(served)
    let buffer = UnsafeMutableRawBufferPointer.allocate(
      byteCount: Swift.max(1, Swift.min(chunkSize, length)), alignment: 16)
    defer { buffer.deallocate() }
    let seed = opened.checksumSeed
    let verified = try pass(opened.file.fd, key, length: length, buffer: buffer, seed: seed) { _ in
    }
    guard verified == header.checksum else { throw unreadable(key, "bad checksum") }
    let again = try pass(
      opened.file.fd, key, length: length, buffer: buffer, seed: seed, chunk: chunk)
    guard again == header.checksum else {
      throw unreadable(
        key, "changed while it was read: the bytes handed out do not match its checksum")
    }
    return served
  }

  /// An unsealed item file opened and its header checked, before any payload byte is read.
  struct CheckedItemFile {
    /// The open item (the caller closes it), a regular file of this user nobody else may write.
    let file: OpenedStoreFile
    /// Its path, for errors.
    let path: String
    let header: CacheFormat.ItemHeader
    /// The CRC-32 of the header's first 24 bytes, which the payload's checksum continues.
    let checksumSeed: UInt32
  }

  /// ``openCheckedItem(_:in:)`` in `<set>/items/`, where `set` is `cache/` (the live set) or a
  /// sign-in's staging directory; `nil` when `items/` or the item is not there. The whole and
  /// the streamed read of one item both open it here.
  ///
  /// - Throws: As ``openCheckedItem(_:in:)``; `items/` that cannot be opened is
  ///   `item_unreadable` (`not_a_regular_file`, `insecure_store` by its problem).
  /// - Complexity: O(1): two opens, one `fstat`, one 28-byte read.
  func openCheckedItem(_ key: CacheItemKey, inSet set: StoreDirectory) throws(CacheStoreError)
    -> CheckedItemFile?
  {
    let items: StoreDirectory
    do {
      items = try files.openDirectory(set, Self.itemsName)
    } catch {
      if error.errno == .noSuchFileOrDirectory { return nil }
      throw failure(error, .itemUnreadable, key: key)
    }
    defer { files.close(items) }
    return try openCheckedItem(key, in: items)
  }

  /// Opens `<items>/<key>` as every read of an unsealed item does (without waiting or following
  /// a link, checked on its descriptor) and checks its 28-byte header against the file's size
  /// (``checkedItemHeader(_:_:fileSize:)``); `nil` when there is no such file.
  ///
  /// - Throws: ``CacheStoreError``: `not_a_regular_file`, `insecure_store`, `item_unreadable`,
  ///   `key_required`.
  /// - Complexity: O(1): one open, one `fstat`, one 28-byte read.
  func openCheckedItem(_ key: CacheItemKey, in items: StoreDirectory) throws(CacheStoreError)
    -> CheckedItemFile?
  {
    let file: OpenedStoreFile
    do {
      file = try files.openFile(items, key.rawValue, .readOnly)
    } catch {
      if error.errno == .noSuchFileOrDirectory { return nil }
      throw failure(error, .itemUnreadable, key: key)
    }
    let path = items.path(of: key.rawValue)
    let head: [UInt8]
    do {
      head = try files.read(file.fd, count: CacheFormat.itemHeaderSize, offset: 0, path: path)
    } catch {
      files.close(file.fd)
      throw failure(error, .itemUnreadable, key: key)
    }
    do {
      let header = try checkedItemHeader(key, head, fileSize: file.status.size)
      return CheckedItemFile(
        file: file, path: path, header: header, checksumSeed: CacheFormat.crc(head[0..<24]))
    } catch {
      files.close(file.fd)
      throw error
    }
  }

  /// Reads the payload of a checked item once, in pieces of at most 64 KiB, and refuses it
  /// when its CRC-32 is not the header's: the check of the streaming read's first pass.
  ///
  /// - Throws: ``CacheStoreError`` `item_unreadable` (bad checksum, cut short, a failed read).
  /// - Complexity: O(payload size) time, O(64 KiB) memory.
  func checkPayload(_ opened: CheckedItemFile, _ key: CacheItemKey) throws(CacheStoreError) {
    let length = Int(opened.header.payloadLength)
    let buffer = UnsafeMutableRawBufferPointer.allocate(
      byteCount: Swift.max(1, Swift.min(1 << 16, length)), alignment: 16)
    defer { buffer.deallocate() }
    let sum: UInt32
    do {
      sum = try pass(
        opened.file.fd, key, length: length, buffer: buffer, seed: opened.checksumSeed
      ) { _ in }
    } catch let error as CacheStoreError {
      throw error
    } catch {
      throw CacheStoreError(code: .itemUnreadable, key: key, message: "\(error)")
    }
    guard sum == opened.header.checksum else { throw unreadable(key, "bad checksum") }
  }

  /// Reads the payload once through `buffer`, handing each piece to `chunk`; returns the
  /// CRC-32 continued from `seed`.
  private func pass(
    _ fd: FileDescriptor, _ key: CacheItemKey, length: Int,
    buffer: UnsafeMutableRawBufferPointer, seed: UInt32,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> UInt32 {
    var sum = seed
    var offset = 0
    while offset < length {
      let count = Swift.min(buffer.count, length - offset)
      let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
      let filled: Int
      do {
        filled = try files.sys.preadAll(
          fd, into: piece, at: Int64(CacheFormat.itemHeaderSize + offset))
      } catch {
        throw unreadable(key, error)
      }
      guard filled == count else { throw unreadable(key, "truncated while it was read") }
      let bytes = UnsafeRawBufferPointer(piece)
      sum = CacheFormat.crc(bytes, seed: sum)
      try chunk(bytes)
      offset += count
    }
    return sum
  }

  /// Decodes an item's 28-byte header and checks it against the file's size from `fstat`
  /// (before any payload buffer exists).
  ///
  /// - Throws: ``CacheStoreError``: `key_required` for a sealed item in an unsealed store,
  ///   `item_unreadable` for a wrong header or size.
  func checkedItemHeader(_ key: CacheItemKey, _ head: [UInt8], fileSize: Int64)
    throws(CacheStoreError) -> CacheFormat.ItemHeader
  {
    let header: CacheFormat.ItemHeader
    switch CacheFormat.decodeItemHeader(head) {
    case .failure where CacheSeal.looksSealedItem(head):
      throw CacheStoreError(
        code: .keyRequired, key: key,
        reason: "item \(key) is sealed; open the store with its sealing key")
    case .failure(let problem): throw unreadable(key, problem.rawValue)
    case .success(let decoded): header = decoded
    }
    if let problem = CacheFormat.checkItemSize(header, fileSize: fileSize) {
      throw unreadable(key, problem.rawValue)
    }
    return header
  }
}
