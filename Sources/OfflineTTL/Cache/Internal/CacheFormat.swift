import CZlib

/// The byte layouts of the directory cache store (little-endian; documented in
/// `docs/cache-format.md`).
///
/// Item file (`cache/items/<key>`): `"OTLI"`, version `UInt32` = 1, `writtenAt` `Int64` ns,
/// payload length `UInt64`, CRC-32 `UInt32` of the 24 header bytes before it followed by the
/// payload, then the payload.
///
/// Index (`cache/index`): a 72-byte header, `"OTLX"`, version `UInt32` = 1, count `UInt64`,
/// oldest `Int64`, newest `Int64`, the items directory's inode `UInt64`, ctime ns `Int64`,
/// mtime ns `Int64`, body length `UInt64`, body CRC-32 `UInt32`, header CRC-32 `UInt32` (over the
/// 68 bytes before it); then the body: per item `writtenAt` `Int64`, key length `UInt8`, key.
enum CacheFormat {
  static let itemMagic: [UInt8] = Array("OTLI".utf8)
  static let indexMagic: [UInt8] = Array("OTLX".utf8)
  static let version: UInt32 = 1
  static let itemHeaderSize = 28
  static let indexHeaderSize = 72
  /// The largest payload an item may have: 1 GiB. A larger length on disk is unreadable before
  /// anything is allocated; a larger write is refused (`EFBIG`).
  static let maximumPayloadLength: UInt64 = 1 << 30
  /// The most items an index may count: 1,048,576. An index claiming more is rebuilt.
  static let maximumItemCount: UInt64 = 1 << 20
  /// The smallest and largest index body entry: `writtenAt` (8), key length (1), key (1–255).
  static let minimumIndexEntrySize: UInt64 = 10
  static let maximumIndexEntrySize: UInt64 = 264

  static func crc(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { crc($0, seed: seed) }
  }

  /// CRC-32 (zlib) of `bytes`, continuing from `seed`; chunked so any length works.
  static func crc(_ bytes: UnsafeRawBufferPointer, seed: UInt32) -> UInt32 {
    guard var base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return seed }
    var remaining = bytes.count
    var value = uLong(seed)
    while remaining > 0 {
      let chunk = Swift.min(remaining, 1 << 30)
      value = CZlib.crc32(value, base, uInt(chunk))
      base += chunk
      remaining -= chunk
    }
    return UInt32(truncatingIfNeeded: value)
  }

  /// The header of an item file.
  static func itemHeader(writtenAt: WallClockInstant, payload: UnsafeRawBufferPointer) -> [UInt8] {
    var header: [UInt8] = itemMagic
    header.reserveCapacity(itemHeaderSize)
    header.appendLittleEndian(version)
    header.appendLittleEndian(UInt64(bitPattern: writtenAt.nanosecondsSinceEpoch))
    header.appendLittleEndian(UInt64(payload.count))
    let sum = crc(payload, seed: crc(header[...]))
    header.appendLittleEndian(sum)
    return header
  }

  /// A decoded item header.
  struct ItemHeader {
    let writtenAt: WallClockInstant
    let payloadLength: UInt64
    let checksum: UInt32
  }

  /// Decodes an item header, or says why it is not one.
  static func decodeItemHeader(_ bytes: [UInt8]) -> Result<ItemHeader, ItemProblem> {
    guard bytes.count >= itemHeaderSize else { return .failure(.truncated) }
    guard Array(bytes[0..<4]) == itemMagic else { return .failure(.badMagic) }
    guard bytes.littleEndianUInt32(at: 4) == version else { return .failure(.unknownVersion) }
    return .success(
      ItemHeader(
        writtenAt: WallClockInstant(
          nanosecondsSinceEpoch: Int64(bitPattern: bytes.littleEndianUInt64(at: 8))),
        payloadLength: bytes.littleEndianUInt64(at: 16),
        checksum: bytes.littleEndianUInt32(at: 24)))
  }

  /// Checks a decoded header against the file's size from `fstat`: the size must be exactly
  /// header + payload length, and the length at most ``maximumPayloadLength``. Runs before any
  /// payload buffer is allocated.
  static func checkItemSize(_ header: ItemHeader, fileSize: Int64) -> ItemProblem? {
    guard header.payloadLength <= maximumPayloadLength else { return .oversized }
    guard fileSize >= 0,
      UInt64(fileSize) == UInt64(itemHeaderSize) + header.payloadLength
    else { return .sizeMismatch }
    return nil
  }

  /// Why an item file is unreadable.
  enum ItemProblem: String, Error {
    case truncated, badMagic = "not an item file", unknownVersion = "unknown version"
    case badChecksum = "bad checksum"
    case oversized = "payload length beyond the 1 GiB maximum"
    case sizeMismatch = "file size does not match the payload length in its header"
  }
}

extension Array where Element == UInt8 {
  mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }

  func littleEndianUInt32(at offset: Int) -> UInt32 {
    var value: UInt32 = 0
    for index in 0..<4 { value |= UInt32(self[offset + index]) << (8 * index) }
    return value
  }

  func littleEndianUInt64(at offset: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<8 { value |= UInt64(self[offset + index]) << (8 * index) }
    return value
  }
}
