import Foundation

/// The sealed layouts of ``DirectoryCacheStore`` (documented in `docs/cache-format.md`, section
/// "Sealed store").
///
/// Item (version 3, chunked; version 2, one blob, is still read): see `CacheSeal+Item.swift`.
///
/// Index (version 2): a 128-byte header (`"OTLX"`, version 2, count, oldest, newest, the mark's generation,
/// the store id, the key check, body length, the body's MAC, the header's MAC over bytes 0..<96),
/// then per item `writtenAt` `Int64`, generation `UInt64`, key length `UInt8`, key.
enum CacheSeal {
  /// The sealed index's version.
  static let indexVersion: UInt32 = 2
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
    header.appendLittleEndian(indexVersion)
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
      && bytes.littleEndianUInt32(at: 4) == indexVersion
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
