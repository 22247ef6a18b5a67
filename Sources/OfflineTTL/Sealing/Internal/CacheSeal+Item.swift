import Foundation

/// Sealed item files (documented in `docs/cache-format.md`, section "Sealed store").
///
/// Version 3 (written): `"OTLI"`, version `UInt32` = 3, `writtenAt` `Int64`, payload length n
/// `UInt64`, generation `UInt64`, a random 24-byte nonce (56 header bytes), then the payload's
/// ciphertext (n bytes), then one 16-byte tag per chunk. The payload is sealed in chunks of
/// ``chunkSize`` bytes (the last may be shorter; an empty payload is one empty chunk), each with
/// its own XChaCha20-Poly1305 (IETF) call, in the STREAM construction of Hoang, Reyhanitabar,
/// Rogaway and Vizár ("Online Authenticated-Encryption and its Nonce-Reuse Misuse-Resistance",
/// CRYPTO 2015): chunk i's nonce is the item's nonce with i (`UInt64`, little-endian) XORed into
/// its last 8 bytes, and its associated data is the 32 header bytes before the nonce, the store
/// id, i (`UInt64`), a last-chunk flag (`UInt8`, 1 for the last chunk) and the key. So chunks
/// that are reordered, dropped, appended, or taken from another item, store, generation or key
/// fail, and the header's length fixes the chunk count and the file's size.
///
/// Version 2 (read only): the same 56 header bytes with version 2, then one ciphertext of the
/// whole payload and its tag; the associated data is the 32 header bytes, the store id and the
/// key.
extension CacheSeal {
  /// The version sealed items are written in: chunked.
  static let itemVersion: UInt32 = 3
  /// The earlier version, one blob per item: still read.
  static let wholeItemVersion: UInt32 = 2
  /// Bytes of a sealed item's header (both versions): 32 bytes, then the 24-byte nonce.
  static let itemHeaderSize = 56
  /// Plain-text bytes per chunk of a version-3 item (the last chunk may be shorter): 64 KiB.
  static let chunkSize = 1 << 16

  /// The largest sealed item file there can be: an item of the 1 GiB maximum payload with its
  /// header and one tag per chunk, with room to spare. A larger file is refused (`EFBIG`)
  /// before anything is allocated for it.
  static let maximumItemFileSize =
    Int64(CacheFormat.maximumPayloadLength)
    + Int64(Sodium.tagLength) * (Int64(CacheFormat.maximumPayloadLength) / Int64(chunkSize) + 1)
    + 4096

  /// The number of chunks of a version-3 payload of `length` bytes: at least one.
  static func chunkCount(payloadLength length: Int) -> Int {
    Swift.max(1, (length + chunkSize - 1) / chunkSize)
  }

  /// Seals an item in the current version (3, chunked).
  ///
  /// - Parameters:
  ///   - nonce: The item's 24-byte nonce: random (tests pass their own to show that the
  ///     associated data alone tells two items apart).
  /// - Complexity: O(payload): one pass, one XChaCha20-Poly1305 call per 64 KiB chunk.
  static func sealItem(
    key: String, payload: Data, writtenAt: WallClockInstant, generation: UInt64,
    storeID: [UInt8], keys: SealKeys, nonce: [UInt8] = Sodium.randomBytes(Sodium.nonceLength)
  ) -> [UInt8] {
    precondition(nonce.count == Sodium.nonceLength)
    var header = CacheFormat.itemMagic
    header.appendLittleEndian(itemVersion)
    header.appendLittleEndian(UInt64(bitPattern: writtenAt.nanosecondsSinceEpoch))
    header.appendLittleEndian(UInt64(payload.count))
    header.appendLittleEndian(generation)
    let length = payload.count
    let count = chunkCount(payloadLength: length)
    var file = [UInt8](
      repeating: 0, count: itemHeaderSize + length + count * Sodium.tagLength)
    file.replaceSubrange(0..<32, with: header)
    file.replaceSubrange(32..<itemHeaderSize, with: nonce)
    var chunk = ChunkBinding(prefix: header, storeID: storeID, key: key, nonce: nonce)
    file.withUnsafeMutableBytes { out in
      payload.withUnsafeBytes { message in
        keys.items.withUnsafeBytes { itemKey in
          for index in 0..<count {
            let range = (index * chunkSize)..<Swift.min(length, (index + 1) * chunkSize)
            let cipher = (itemHeaderSize + range.lowerBound)..<(itemHeaderSize + range.upperBound)
            let tagStart = itemHeaderSize + length + index * Sodium.tagLength
            chunk.bind(index, last: index == count - 1) { ad, chunkNonce in
              XChaCha20Poly1305.sealDetached(
                UnsafeRawBufferPointer(rebasing: message[range]),
                into: UnsafeMutableRawBufferPointer(rebasing: out[cipher]),
                tag: UnsafeMutableRawBufferPointer(
                  rebasing: out[tagStart..<(tagStart + Sodium.tagLength)]),
                associatedData: ad, nonce: chunkNonce, key: itemKey)
            }
          }
        }
      }
    }
    return file
  }

  /// Whether `bytes` start like a sealed item of either version (for an unsealed store:
  /// `key_required`).
  static func looksSealedItem(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 8, Array(bytes[0..<4]) == CacheFormat.itemMagic else { return false }
    let version = bytes.littleEndianUInt32(at: 4)
    return version == itemVersion || version == wholeItemVersion
  }

  /// A sealed item's 56-byte header, decoded and checked against the file's size.
  struct ItemHeader {
    /// 3 (chunked) or 2 (one blob).
    var version: UInt32
    /// `writtenAt` and the generation the item was committed under.
    var entry: Entry
    /// The payload's length in bytes (the file is the header, the payload's ciphertext, then
    /// ``tagsLength`` bytes of tags).
    var payloadLength: Int
    /// The 32 header bytes before the nonce (the start of the associated data).
    var prefix: [UInt8]
    /// The random 24-byte nonce.
    var nonce: [UInt8]

    /// The number of sealed chunks: one for version 2.
    var chunkCount: Int {
      version == wholeItemVersion ? 1 : CacheSeal.chunkCount(payloadLength: payloadLength)
    }

    /// Bytes of tags after the ciphertext: 16 per chunk.
    var tagsLength: Int { chunkCount * Sodium.tagLength }

    /// The payload bytes of chunk `index` (its ciphertext's place after the header).
    func chunkRange(_ index: Int) -> Range<Int> {
      guard version != wholeItemVersion else { return 0..<payloadLength }
      return (index * chunkSize)..<Swift.min(payloadLength, (index + 1) * chunkSize)
    }
  }

  /// Decodes the header of a sealed item file (`head`: its first ``itemHeaderSize`` bytes, or
  /// all of a shorter file) and checks its payload length against `fileSize`, before any buffer
  /// for the payload exists.
  ///
  /// - Returns: The header; `unsealed` when it does not start like a sealed item, `unauthentic`
  ///   when it is truncated or its length (with the chunk count it implies) disagrees with the
  ///   file's size.
  /// - Complexity: O(1).
  static func decodeItemHeader(_ head: [UInt8], fileSize: Int64) -> Result<ItemHeader, Failure> {
    guard looksSealedItem(head) else { return .failure(.unsealed) }
    guard head.count >= itemHeaderSize else { return .failure(.unauthentic("truncated")) }
    let version = head.littleEndianUInt32(at: 4)
    let length = head.littleEndianUInt64(at: 16)
    guard length <= CacheFormat.maximumPayloadLength else {
      return .failure(.unauthentic("its length does not match its header"))
    }
    let header = ItemHeader(
      version: version,
      entry: Entry(
        writtenAt: WallClockInstant(
          nanosecondsSinceEpoch: Int64(bitPattern: head.littleEndianUInt64(at: 8))),
        generation: head.littleEndianUInt64(at: 24)),
      payloadLength: Int(length), prefix: Array(head[0..<32]),
      nonce: Array(head[32..<itemHeaderSize]))
    guard Int64(itemHeaderSize + header.payloadLength + header.tagsLength) == fileSize else {
      return .failure(.unauthentic("its length does not match its header"))
    }
    return .success(header)
  }

  /// Authenticates and decrypts an item's ciphertext (the file after its header, without the
  /// tags) in place: on success `ciphertext` holds the payload. Every chunk is opened on the
  /// caller's thread, in order. (Splitting the chunks with a second thread was measured and
  /// left out: on a loaded machine a helper preempted in the middle of a chunk made the caller
  /// wait a scheduling period, several times a one-thread read.)
  ///
  /// - Parameters:
  ///   - ciphertext: Exactly `header.payloadLength` bytes.
  ///   - tags: The `header.tagsLength` bytes after them (the file's last).
  /// - Returns: Whether every chunk authenticates under this key, store, name and header, in
  ///   its place. When one does not, the whole buffer is zeroed: nothing decrypted is left in it.
  /// - Complexity: O(payload).
  static func openPayloadInPlace(
    _ ciphertext: UnsafeMutableRawBufferPointer, tags: UnsafeRawBufferPointer,
    header: ItemHeader, key: String, storeID: [UInt8], keys: SealKeys
  ) -> Bool {
    guard ciphertext.count == header.payloadLength, tags.count == header.tagsLength else {
      return false
    }
    if header.version == wholeItemVersion {
      return keys.items.withUnsafeBytes { itemKey in
        (header.prefix + storeID + Array(key.utf8)).withUnsafeBytes { ad in
          header.nonce.withUnsafeBytes { nonce in
            XChaCha20Poly1305.openInPlace(
              ciphertext, tag: tags, associatedData: ad, nonce: nonce, key: itemKey)
          }
        }
      }
    }
    let count = header.chunkCount
    let binding = ChunkBinding(
      prefix: header.prefix, storeID: storeID, key: key, nonce: header.nonce)
    let opened = keys.items.withUnsafeBytes { itemKey -> Bool in
      var chunk = binding
      return (0..<count).allSatisfy {
        chunk.open($0, of: count, in: ciphertext, tags: tags, header: header, key: itemKey)
      }
    }
    if !opened { Sodium.zero(ciphertext) }
    return opened
  }

  /// Opens a sealed item file held whole in memory (``decodeItemHeader(_:fileSize:)``, then
  /// ``openPayloadInPlace(_:tags:header:key:storeID:keys:)`` on a copy of the ciphertext, which
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
      bytes.withUnsafeBytes { file in
        openPayloadInPlace(
          ciphertext, tags: UnsafeRawBufferPointer(rebasing: file[end...]), header: header,
          key: key, storeID: storeID, keys: keys)
      }
    }
    guard ok else { return .failure(.unauthentic(notAuthentic)) }
    return .success((payload, header.entry))
  }

  /// Why an item that does not authenticate is refused.
  static let notAuthentic = "it does not authenticate under this key, store, name and header"
}

/// The associated data and nonce of a version-3 item's chunks, rebuilt in place for each chunk
/// (no allocation per chunk): associated data = the 32 header bytes, the store id, the chunk
/// index (`UInt64` LE), the last-chunk flag (`UInt8`), the key; nonce = the item's nonce with
/// the chunk index XORed into its last 8 bytes.
struct ChunkBinding {
  private var associatedData: [UInt8]
  private var nonce: [UInt8]
  private let itemNonce: [UInt8]
  private let indexOffset: Int

  init(prefix: [UInt8], storeID: [UInt8], key: String, nonce: [UInt8]) {
    indexOffset = prefix.count + storeID.count
    associatedData = prefix + storeID + [UInt8](repeating: 0, count: 9) + Array(key.utf8)
    self.nonce = nonce
    itemNonce = nonce
  }

  /// Calls `body` with the associated data and nonce of chunk `index`.
  mutating func bind<R>(
    _ index: Int, last: Bool,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R
  ) rethrows -> R {
    let counter = UInt64(index)
    for byte in 0..<8 {
      let value = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(byte)))
      associatedData[indexOffset + byte] = value
      nonce[Sodium.nonceLength - 8 + byte] = itemNonce[Sodium.nonceLength - 8 + byte] ^ value
    }
    associatedData[indexOffset + 8] = last ? 1 : 0
    return try associatedData.withUnsafeBytes { ad in
      try nonce.withUnsafeBytes { try body(ad, $0) }
    }
  }

  /// Authenticates and decrypts chunk `index` of `count` in place in `ciphertext` (the whole
  /// payload's buffer), with its tag from `tags`.
  mutating func open(
    _ index: Int, of count: Int, in ciphertext: UnsafeMutableRawBufferPointer,
    tags: UnsafeRawBufferPointer, header: CacheSeal.ItemHeader, key: UnsafeRawBufferPointer
  ) -> Bool {
    let range = header.chunkRange(index)
    let tag = index * Sodium.tagLength
    return bind(index, last: index == count - 1) { ad, nonce in
      XChaCha20Poly1305.openInPlace(
        UnsafeMutableRawBufferPointer(rebasing: ciphertext[range]),
        tag: UnsafeRawBufferPointer(rebasing: tags[tag..<(tag + Sodium.tagLength)]),
        associatedData: ad, nonce: nonce, key: key)
    }
  }
}
