import Foundation
import Testing

@testable import OfflineTTL

/// Sealed item files: the chunked version 3 round-trips at every size that matters, and every
/// reordering, truncation, extension, splice between items, stores, generations or keys, and
/// flipped byte fails to authenticate; version-2 items (one blob) still open.
@Suite struct CacheSealItemTests {
  static let keys = SealKeys.of(try! SealingKey(bytes: [UInt8](repeating: 9, count: 32)))
  static let otherKeys = SealKeys.of(try! SealingKey(bytes: [UInt8](repeating: 10, count: 32)))
  static let storeID: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
  static let writtenAt = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let nonce = [UInt8](repeating: 0x33, count: Sodium.nonceLength)
  static let chunk = CacheSeal.chunkSize

  static func payload(_ count: Int, salt: UInt8 = 0) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ salt })
  }

  /// An item sealed with a fixed nonce unless `random`: two items that differ only in what the
  /// associated data binds then share their nonces, so only the binding tells them apart.
  static func seal(
    _ payload: Data, key: String = "token", writtenAt: WallClockInstant = writtenAt,
    generation: UInt64 = 4, storeID: [UInt8] = storeID, keys: SealKeys = keys,
    random: Bool = false
  ) -> [UInt8] {
    CacheSeal.sealItem(
      key: key, payload: payload, writtenAt: writtenAt, generation: generation,
      storeID: storeID, keys: keys,
      nonce: random ? Sodium.randomBytes(Sodium.nonceLength) : nonce)
  }

  static func open(_ bytes: [UInt8], key: String = "token", storeID: [UInt8] = storeID)
    -> Data?
  {
    guard
      case .success(let opened) = CacheSeal.openItem(
        bytes, key: key, storeID: storeID, keys: keys)
    else { return nil }
    return opened.payload
  }

  /// A version-2 item (one XChaCha20-Poly1305 blob), written as the earlier release wrote it:
  /// built here from the layout, not by the library's writer.
  static func sealWhole(_ payload: Data, key: String = "token", generation: UInt64 = 4)
    -> [UInt8]
  {
    var header = Array("OTLI".utf8)
    header.appendLittleEndian(UInt32(2))
    header.appendLittleEndian(UInt64(bitPattern: writtenAt.nanosecondsSinceEpoch))
    header.appendLittleEndian(UInt64(payload.count))
    header.appendLittleEndian(generation)
    var file = [UInt8](repeating: 0, count: 56 + payload.count + 16)
    file.replaceSubrange(0..<32, with: header)
    file.replaceSubrange(32..<56, with: nonce)
    file.withUnsafeMutableBytes { out in
      payload.withUnsafeBytes { message in
        Sodium.seal(
          message, associatedData: header + storeID + Array(key.utf8), nonce: nonce,
          key: keys.items, into: UnsafeMutableRawBufferPointer(rebasing: out[56...]))
      }
    }
    return file
  }

  /// Chunk `index`'s ciphertext and tag in a version-3 file of `length` payload bytes.
  static func chunkParts(_ bytes: [UInt8], _ index: Int, length: Int)
    -> (ciphertext: Range<Int>, tag: Range<Int>)
  {
    let start = 56 + index * chunk
    let end = 56 + Swift.min(length, (index + 1) * chunk)
    let tag = 56 + length + index * 16
    return (start..<end, tag..<(tag + 16))
  }

  /// A file whose chunks are `parts` (ciphertext, tag) under `header` with its length set to
  /// the chunks' total.
  static func assemble(header: [UInt8], _ parts: [([UInt8], [UInt8])]) -> [UInt8] {
    var head = header
    let length = parts.map(\.0.count).reduce(0, +)
    withUnsafeBytes(of: UInt64(length).littleEndian) { head.replaceSubrange(16..<24, with: $0) }
    return head + parts.flatMap(\.0) + parts.flatMap(\.1)
  }

  static func parts(_ bytes: [UInt8], length: Int) -> [([UInt8], [UInt8])] {
    (0..<CacheSeal.chunkCount(payloadLength: length)).map {
      let (ciphertext, tag) = chunkParts(bytes, $0, length: length)
      return (Array(bytes[ciphertext]), Array(bytes[tag]))
    }
  }

  static let sizes = [
    0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, 4 * chunk - 1,
    4 * chunk, 4 * chunk + 1, 16 * chunk, 16 * chunk + 17,
  ]

  @Test(arguments: sizes)
  func roundTripsAtEverySize(_ size: Int) throws {
    let payload = Self.payload(size)
    let bytes = Self.seal(payload, random: true)
    let chunks = CacheSeal.chunkCount(payloadLength: size)
    #expect(chunks == Swift.max(1, (size + Self.chunk - 1) / Self.chunk))
    #expect(bytes.count == 56 + size + 16 * chunks)
    #expect(bytes.littleEndianUInt32(at: 4) == 3)
    #expect(bytes.littleEndianUInt64(at: 16) == UInt64(size))
    let opened = try CacheSeal.openItem(
      bytes, key: "token", storeID: Self.storeID, keys: Self.keys
    ).get()
    #expect(opened.payload == payload)
    #expect(opened.entry == CacheSeal.Entry(writtenAt: Self.writtenAt, generation: 4))
    // No plain text on disk: the payload (when it is long enough to tell) is not in the file.
    if size >= 16 {
      #expect(Data(bytes).range(of: payload.prefix(16)) == nil)
    }
  }

  /// Each chunk's first, middle and last ciphertext byte, each tag byte, each nonce byte, each
  /// header byte: refused, never opened, and the payload buffer holds nothing decrypted.
  @Test(arguments: [3 * chunk + 5, 4 * chunk + 7])
  func everyFlippedPlaceOfAChunkedItemIsRefused(_ size: Int) throws {
    let bytes = Self.seal(Self.payload(size))
    #expect(Self.open(bytes) == Self.payload(size))
    var offsets = Array(0..<56)
    for index in 0..<CacheSeal.chunkCount(payloadLength: size) {
      let (ciphertext, tag) = Self.chunkParts(bytes, index, length: size)
      offsets += [ciphertext.lowerBound, (ciphertext.lowerBound + ciphertext.upperBound) / 2]
      offsets += [ciphertext.upperBound - 1]
      offsets += Array(tag)
    }
    for offset in offsets {
      var flipped = bytes
      flipped[offset] ^= 0x01
      switch CacheSeal.openItem(flipped, key: "token", storeID: Self.storeID, keys: Self.keys) {
      case .success: Issue.record("offset \(offset) of \(bytes.count) opened")
      case .failure(.unsealed): #expect(offset < 8, "offset \(offset): unsealed")
      case .failure(.otherKey): Issue.record("offset \(offset): other key")
      case .failure(.unauthentic): break
      }
    }
  }

  @Test func aFailedChunkLeavesNothingDecryptedInTheBuffer() throws {
    for size in [2 * Self.chunk + 3, 4 * Self.chunk + 3] {
      var bytes = Self.seal(Self.payload(size))
      let header = try CacheSeal.decodeItemHeader(
        Array(bytes[0..<56]), fileSize: Int64(bytes.count)
      ).get()
      // The last tag is wrong: every earlier chunk authenticates (and was decrypted) first.
      bytes[bytes.count - 1] ^= 0x80
      var buffer = Array(bytes[56..<(56 + size)])
      let opened = buffer.withUnsafeMutableBytes { ciphertext in
        bytes.withUnsafeBytes { file in
          CacheSeal.openPayloadInPlace(
            ciphertext, tags: UnsafeRawBufferPointer(rebasing: file[(56 + size)...]),
            header: header, key: "token", storeID: Self.storeID, keys: Self.keys)
        }
      }
      #expect(!opened)
      #expect(buffer.allSatisfy { $0 == 0 }, "size \(size): zeroed")
    }
  }

  @Test(arguments: [2 * chunk, 3 * chunk + 5, 4 * chunk + 7])
  func reorderedDroppedOrAppendedChunksAreRefused(_ size: Int) throws {
    let bytes = Self.seal(Self.payload(size))
    let header = Array(bytes[0..<56])
    let parts = Self.parts(bytes, length: size)
    #expect(Self.open(Self.assemble(header: header, parts)) == Self.payload(size))
    var swapped = parts
    swapped.swapAt(0, 1)
    var cases: [(String, [UInt8])] = [
      ("chunks 0 and 1 swapped", Self.assemble(header: header, swapped)),
      ("last chunk dropped", Self.assemble(header: header, Array(parts.dropLast()))),
      ("first chunk dropped", Self.assemble(header: header, Array(parts.dropFirst()))),
      ("last chunk repeated", Self.assemble(header: header, parts + [parts.last!])),
      ("a chunk appended", Self.assemble(header: header, parts + [parts[0]])),
      // The length left as it was: the file's size no longer matches the header.
      (
        "last chunk dropped, header kept",
        Array(bytes[0..<(56 + parts.dropLast().map(\.0.count).reduce(0, +))])
          + parts.dropLast().flatMap(\.1)
      ),
      (
        "tags swapped only",
        Self.assemble(
          header: header, [(parts[0].0, parts[1].1), (parts[1].0, parts[0].1)] + parts.dropFirst(2))
      ),
    ]
    // The last chunk cut to a whole chunk's worth of ciphertext ends at a chunk boundary.
    if parts.last!.0.count != Self.chunk {
      var cut = parts
      cut[cut.count - 1].0 = Array(cut[cut.count - 1].0.prefix(1))
      cases.append(("last chunk shortened", Self.assemble(header: header, cut)))
    }
    for (name, forged) in cases {
      #expect(Self.open(forged) == nil, "\(name)")
    }
  }

  /// Chunks of items that share the nonce (so only the associated data tells them apart) but
  /// differ in one bound field: spliced into the item at the same place, each is refused.
  @Test func aChunkFromAnotherItemStoreGenerationOrKeyIsRefused() throws {
    let size = 3 * Self.chunk + 5
    let bytes = Self.seal(Self.payload(size))
    let header = Array(bytes[0..<56])
    let mine = Self.parts(bytes, length: size)
    let others: [(String, [UInt8])] = [
      ("another key name", Self.seal(Self.payload(size), key: "other")),
      ("another store", Self.seal(Self.payload(size), storeID: [9, 9, 9, 9, 9, 9, 9, 9])),
      ("another generation", Self.seal(Self.payload(size), generation: 5)),
      (
        "another writtenAt",
        Self.seal(
          Self.payload(size),
          writtenAt: WallClockInstant(
            nanosecondsSinceEpoch: Self.writtenAt.nanosecondsSinceEpoch + 1))
      ),
      ("another sealing key", Self.seal(Self.payload(size), keys: Self.otherKeys)),
      // The same binding: only the item's random nonce tells the two apart.
      ("another item of the same binding", Self.seal(Self.payload(size, salt: 0x5A), random: true)),
    ]
    for (name, other) in others {
      let theirs = Self.parts(other, length: size)
      for index in mine.indices {
        var spliced = mine
        spliced[index] = theirs[index]
        #expect(Self.open(Self.assemble(header: header, spliced)) == nil, "\(name), chunk \(index)")
      }
      // The whole other file under this item's name and store: refused when it is bound to
      // another name, store or key; an item of another generation or time carries its own
      // header and opens (the store's index entry then refuses it as not current).
      let bound = ["another key name", "another store", "another sealing key"].contains(name)
      #expect((Self.open(other) == nil) == bound, "\(name), whole")
    }
  }

  @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5])
  func aVersion2ItemStillOpensAndItsVersionCannotBeChanged(_ size: Int) throws {
    let payload = Self.payload(size)
    let whole = Self.sealWhole(payload)
    #expect(whole.count == 56 + size + 16)
    let opened = try CacheSeal.openItem(
      whole, key: "token", storeID: Self.storeID, keys: Self.keys
    ).get()
    #expect(opened.payload == payload)
    #expect(opened.entry == CacheSeal.Entry(writtenAt: Self.writtenAt, generation: 4))
    #expect(Self.open(whole, key: "other") == nil)
    #expect(Self.open(whole, storeID: [0, 0, 0, 0, 0, 0, 0, 0]) == nil)
    // A version-2 file relabelled 3, and a version-3 file relabelled 2 (for one chunk both have
    // the same size: only the binding of the version refuses it).
    var relabelled = whole
    relabelled[4] = 3
    #expect(Self.open(relabelled) == nil)
    var chunked = Self.seal(payload)
    chunked[4] = 2
    #expect(Self.open(chunked) == nil)
    var unknown = Self.seal(payload)
    unknown[4] = 4
    guard
      case .failure(.unsealed) = CacheSeal.openItem(
        unknown, key: "token", storeID: Self.storeID, keys: Self.keys)
    else {
      Issue.record("an unknown version is not a sealed item")
      return
    }
  }

  @Test func anEmptyPayloadIsOneChunkWithItsTag() throws {
    let bytes = Self.seal(Data())
    #expect(bytes.count == 56 + 16)
    #expect(Self.open(bytes) == Data())
    #expect(Self.open(Array(bytes.prefix(56))) == nil, "the tag dropped")
    #expect(Self.open(bytes + [0]) == nil, "a byte appended")
    var flipped = bytes
    flipped[60] ^= 1
    #expect(Self.open(flipped) == nil)
  }

  @Test func aHeaderLengthThatDisagreesWithTheFileSizeIsRefusedBeforeAnyRead() {
    let bytes = Self.seal(Self.payload(2 * Self.chunk + 1))
    for delta in [-17, -16, -1, 1, 16, 17] {
      let size = Int64(bytes.count + delta)
      guard
        case .failure(.unauthentic) = CacheSeal.decodeItemHeader(
          Array(bytes[0..<56]), fileSize: size)
      else {
        Issue.record("size off by \(delta) accepted")
        continue
      }
    }
    var huge = Array(bytes[0..<56])
    withUnsafeBytes(of: UInt64.max.littleEndian) { huge.replaceSubrange(16..<24, with: $0) }
    guard case .failure(.unauthentic) = CacheSeal.decodeItemHeader(huge, fileSize: Int64.max)
    else {
      Issue.record("a length past the maximum was accepted")
      return
    }
  }
}
