import Foundation

/// The sealed (version 2) layouts of ``DirectoryCacheStore`` (documented in
/// `docs/cache-format.md`, section "Sealed store").
///
/// Item: `"OTLI"`, version `UInt32` = 2, `writtenAt` `Int64`, payload length `UInt64`,
/// generation `UInt64`, a random 24-byte nonce, then the XChaCha20-Poly1305 ciphertext and tag.
/// The associated data is the 32 header bytes before the nonce, the store id and the key, so an
/// item moved to another key, restamped, copied from another generation or another store fails.
///
/// Index: a 128-byte header (`"OTLX"`, version 2, count, oldest, newest, the mark's generation,
/// the store id, the key check, body length, the body's MAC, the header's MAC over bytes 0..<96),
/// then per item `writtenAt` `Int64`, generation `UInt64`, key length `UInt8`, key.
enum CacheSeal {
  static let version: UInt32 = 2
  static let itemHeaderSize = 56
  static let indexHeaderSize = 128

  /// One indexed item of a sealed store.
  struct Entry: Equatable {
    var writtenAt: WallClockInstant
    var generation: UInt64
  }

  /// A sealed index, decoded.
  struct Index {
    var entries: [String: Entry]
    var generation: UInt64
    var storeID: [UInt8]

    var summary: ItemTimeSummary { ItemTimeSummary(writtenAt: entries.values.map(\.writtenAt)) }
  }

  /// Why a sealed file is refused.
  enum Failure: Error {
    /// Not sealed (an unsealed version-1 file, or not a store file at all).
    case unsealed
    /// Sealed with another key.
    case otherKey
    /// Altered, or bound to something else (another store, generation, key or time).
    case unauthentic(String)
  }

  // MARK: Items

  static func sealItem(
    key: String, payload: Data, writtenAt: WallClockInstant, generation: UInt64,
    storeID: [UInt8], keys: SealKeys
  ) -> [UInt8] {
    var header = CacheFormat.itemMagic
    header.appendLittleEndian(version)
    header.appendLittleEndian(UInt64(bitPattern: writtenAt.nanosecondsSinceEpoch))
    header.appendLittleEndian(UInt64(payload.count))
    header.appendLittleEndian(generation)
    let nonce = Sodium.randomBytes(Sodium.nonceLength)
    let ad = header + storeID + Array(key.utf8)
    var file = [UInt8](repeating: 0, count: itemHeaderSize + payload.count + Sodium.tagLength)
    file.replaceSubrange(0..<32, with: header)
    file.replaceSubrange(32..<56, with: nonce)
    file.withUnsafeMutableBytes { out in
      payload.withUnsafeBytes { message in
        Sodium.seal(
          message, associatedData: ad, nonce: nonce, key: keys.items,
          into: UnsafeMutableRawBufferPointer(rebasing: out[itemHeaderSize...]))
      }
    }
    return file
  }

  /// Whether `bytes` start like a sealed item (for an unsealed store: `key_required`).
  static func looksSealedItem(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 8 && Array(bytes[0..<4]) == CacheFormat.itemMagic
      && bytes.littleEndianUInt32(at: 4) == version
  }

  /// The largest sealed item file there can be: an item of the 1 GiB maximum payload with its
  /// header and tag, with room to spare. A larger file is refused (`EFBIG`) before anything is
  /// allocated for it.
  static let maximumItemFileSize = Int64(CacheFormat.maximumPayloadLength) + 4096

  /// A sealed item's 56-byte header, decoded and checked against the file's size.
  struct ItemHeader {
    /// `writtenAt` and the generation the item was committed under.
    var entry: Entry
    /// The payload's length in bytes (the file is the header, the payload's ciphertext and the
    /// 16-byte tag).
    var payloadLength: Int
    /// The 32 header bytes before the nonce (the start of the associated data).
    var prefix: [UInt8]
    /// The random 24-byte nonce.
    var nonce: [UInt8]
  }

  /// Decodes the header of a sealed item file (`head`: its first ``itemHeaderSize`` bytes, or
  /// all of a shorter file) and checks its payload length against `fileSize`, before any buffer
  /// for the payload exists.
  ///
  /// - Returns: The header; `unsealed` when it does not start like a sealed item, `unauthentic`
  ///   when it is truncated or its length disagrees with the file's size.
  /// - Complexity: O(1).
  static func decodeItemHeader(_ head: [UInt8], fileSize: Int64) -> Result<ItemHeader, Failure> {
    guard looksSealedItem(head) else { return .failure(.unsealed) }
    let overhead = Int64(itemHeaderSize + Sodium.tagLength)
    guard head.count >= itemHeaderSize, fileSize >= overhead else {
      return .failure(.unauthentic("truncated"))
    }
    let length = head.littleEndianUInt64(at: 16)
    guard length == UInt64(fileSize - overhead) else {
      return .failure(.unauthentic("its length does not match its header"))
    }
    return .success(
      ItemHeader(
        entry: Entry(
          writtenAt: WallClockInstant(
            nanosecondsSinceEpoch: Int64(bitPattern: head.littleEndianUInt64(at: 8))),
          generation: head.littleEndianUInt64(at: 24)),
        payloadLength: Int(length), prefix: Array(head[0..<32]), nonce: Array(head[32..<56])))
  }

  /// Authenticates and decrypts an item's ciphertext (the file after its header, without the
  /// tag) in place: on success `ciphertext` holds the payload. The associated data binds the
  /// header, the store id and the key.
  ///
  /// - Parameters:
  ///   - ciphertext: Exactly `header.payloadLength` bytes.
  ///   - tag: The 16 bytes after them (the file's last).
  /// - Returns: Whether the item authenticates under this key, store, name and header.
  /// - Complexity: O(payload).
  static func openPayloadInPlace(
    _ ciphertext: UnsafeMutableRawBufferPointer, tag: [UInt8], header: ItemHeader, key: String,
    storeID: [UInt8], keys: SealKeys
  ) -> Bool {
    guard ciphertext.count == header.payloadLength else { return false }
    return Sodium.openInPlace(
      ciphertext, tag: tag, associatedData: header.prefix + storeID + Array(key.utf8),
      nonce: header.nonce, key: keys.items)
  }

  /// Opens a sealed item file held whole in memory (``decodeItemHeader(_:fileSize:)``, then
  /// ``openPayloadInPlace(_:tag:header:key:storeID:keys:)`` on a copy of the ciphertext, which
  /// becomes the payload).
  ///
  /// - Returns: The payload, `writtenAt` and the generation it was committed under.
  /// - Complexity: O(file size).
  static func openItem(_ bytes: [UInt8], key: String, storeID: [UInt8], keys: SealKeys)
    -> Result<(payload: Data, entry: Entry), Failure>
  {
    let header: ItemHeader
    switch decodeItemHeader(Array(bytes.prefix(itemHeaderSize)), fileSize: Int64(bytes.count)) {
    case .failure(let failure): return .failure(failure)
    case .success(let decoded): header = decoded
    }
    let end = itemHeaderSize + header.payloadLength
    var payload = Data(bytes[itemHeaderSize..<end])
    let ok = payload.withUnsafeMutableBytes { ciphertext in
      openPayloadInPlace(
        ciphertext, tag: Array(bytes[end...]), header: header, key: key, storeID: storeID,
        keys: keys)
    }
    guard ok else { return .failure(.unauthentic(notAuthentic)) }
    return .success((payload, header.entry))
  }

  /// Why an item that does not authenticate is refused.
  static let notAuthentic = "it does not authenticate under this key, store, name and header"

  // MARK: Index

  /// The sealed index; a staged index of a sign-in or session commit passes the sign-in id it
  /// belongs to, which its header MAC then covers (after the 96 header bytes; it is not stored):
  /// the index verifies only for a reader that expects that id
  /// (``decodeIndexHeader(_:keys:signIn:)``).
  static func encodeIndex(_ index: Index, keys: SealKeys, signIn: SignInID? = nil) -> [UInt8] {
    var body: [UInt8] = []
    body.reserveCapacity(index.entries.count * 40)
    for (key, entry) in index.entries.sorted(by: {
      $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
    }) {
      body.appendLittleEndian(UInt64(bitPattern: entry.writtenAt.nanosecondsSinceEpoch))
      body.appendLittleEndian(entry.generation)
      let utf8 = Array(key.utf8)
      body.append(UInt8(utf8.count))
      body.append(contentsOf: utf8)
    }
    let summary = index.summary
    var header = CacheFormat.indexMagic
    header.appendLittleEndian(version)
    header.appendLittleEndian(UInt64(summary.count))
    header.appendLittleEndian(UInt64(bitPattern: summary.oldest?.nanosecondsSinceEpoch ?? 0))
    header.appendLittleEndian(UInt64(bitPattern: summary.newest?.nanosecondsSinceEpoch ?? 0))
    header.appendLittleEndian(index.generation)
    header += index.storeID
    header += keys.check
    header.appendLittleEndian(UInt64(body.count))
    header += Sodium.mac([body], key: keys.index)
    header += Sodium.mac([header] + (signIn.map { [$0.bytes] } ?? []), key: keys.index)
    return header + body
  }

  /// A verified index header.
  struct Header {
    var summary: ItemTimeSummary
    var generation: UInt64
    var storeID: [UInt8]
    var bodyLength: UInt64
    var bodyMAC: [UInt8]
  }

  /// Whether `bytes` start like a sealed index (for an unsealed store: `key_required`).
  static func looksSealedIndex(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 8 && Array(bytes[0..<4]) == CacheFormat.indexMagic
      && bytes.littleEndianUInt32(at: 4) == version
  }

  /// The verified header of a sealed index; `signIn` is the sign-in id a staged index must be
  /// bound to (`nil`: the live index, or a staging written before sign-in ids existed).
  static func decodeIndexHeader(_ bytes: [UInt8], keys: SealKeys, signIn: SignInID? = nil)
    -> Result<Header, Failure>
  {
    guard looksSealedIndex(bytes) else { return .failure(.unsealed) }
    guard bytes.count >= indexHeaderSize else { return .failure(.unauthentic("truncated")) }
    guard Sodium.equalInConstantTime(bytes[48..<56], keys.check) else {
      return .failure(.otherKey)
    }
    let expected = Sodium.mac(
      [Array(bytes[0..<96])] + (signIn.map { [$0.bytes] } ?? []), key: keys.index)
    guard Sodium.equalInConstantTime(bytes[96..<128], expected) else {
      return .failure(.unauthentic("its header MAC does not verify"))
    }
    let count = bytes.littleEndianUInt64(at: 8)
    let summary: ItemTimeSummary
    if count == 0 {
      summary = .empty
    } else {
      guard count <= UInt64(Int32.max),
        let bounded = try? ItemTimeSummary(
          count: Int(count),
          oldest: WallClockInstant(
            nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 16))),
          newest: WallClockInstant(
            nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 24))))
      else { return .failure(.unauthentic("its summary is inconsistent")) }
      summary = bounded
    }
    return .success(
      Header(
        summary: summary, generation: bytes.littleEndianUInt64(at: 32),
        storeID: Array(bytes[40..<48]), bodyLength: bytes.littleEndianUInt64(at: 56),
        bodyMAC: Array(bytes[64..<96])))
  }

  static func decodeIndexBody(_ body: [UInt8], header: Header, keys: SealKeys)
    -> Result<Index, Failure>
  {
    guard UInt64(body.count) == header.bodyLength,
      Sodium.equalInConstantTime(Sodium.mac([body], key: keys.index), header.bodyMAC)
    else { return .failure(.unauthentic("its body MAC does not verify")) }
    var entries: [String: Entry] = [:]
    var offset = 0
    while offset < body.count {
      guard offset + 17 <= body.count else { return .failure(.unauthentic("malformed body")) }
      let writtenAt = Int64(bitPattern: body.littleEndianUInt64(at: offset))
      let generation = body.littleEndianUInt64(at: offset + 8)
      let length = Int(body[offset + 16])
      offset += 17
      guard offset + length <= body.count,
        let key = String(validating: body[offset..<offset + length], as: UTF8.self),
        CacheItemKey.problem(with: key) == nil
      else { return .failure(.unauthentic("malformed body")) }
      offset += length
      entries[key] = Entry(
        writtenAt: WallClockInstant(nanosecondsSinceEpoch: writtenAt), generation: generation)
    }
    let index = Index(entries: entries, generation: header.generation, storeID: header.storeID)
    guard index.summary == header.summary else {
      return .failure(.unauthentic("its body does not match its header"))
    }
    return .success(index)
  }
}
