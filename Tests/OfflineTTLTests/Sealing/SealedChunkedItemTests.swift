import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// Chunked sealed items through the gate: large items read back whole and streamed; a forged
/// chunk, a chunk swap, a dropped or appended chunk is `item_unauthentic` with the bytes left
/// alone until a sign-in re-seals; an item written by the earlier release (version 2, one blob)
/// still reads.
@Suite struct SealedChunkedItemTests {
  typealias Fixture = SealedStoreTests.Fixture
  static let chunk = CacheSeal.chunkSize
  static let size = 1 << 20

  static func payload(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
  }

  /// Signs in with one large item `big` (and a small `token`).
  func fixture(size: Int = size) throws -> Fixture {
    let f = try Fixture()
    _ = try f.gate().beginOnlineSession(
      writing: [(CacheItemKey("big"), Self.payload(size)), (CacheItemKey("token"), Data("t".utf8))])
    return f
  }

  func read(_ f: Fixture, _ key: String = "big") throws -> Data? {
    guard case .opened(let reader) = try f.gate().openOffline() else { return nil }
    return try reader.item(forKey: CacheItemKey(key))?.payload
  }

  func streamed(_ f: Fixture, _ key: String = "big") throws -> Data? {
    guard case .opened(let reader) = try f.gate().openOffline() else { return nil }
    var out = Data()
    guard
      try reader.read(CacheItemKey(key), chunkSize: 50_000, into: { out.append(contentsOf: $0) })
        != nil
    else { return nil }
    return out
  }

  func expectRefused(
    _ f: Fixture, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
  )
    throws
  {
    // The item store's files (an open observes the clock mark, which may advance it).
    func items() throws -> [String: Data] { try f.snapshot().filter { $0.key.hasPrefix("cache/") } }
    let before = try items()
    #expect(try f.refusal("big") == "item_unauthentic", comment, sourceLocation: sourceLocation)
    #expect(try items() == before, "bytes left alone", sourceLocation: sourceLocation)
    #expect(try f.refusal("token") == nil, "other items still read", sourceLocation: sourceLocation)
  }

  func recovers(_ f: Fixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
    _ = try f.gate().beginOnlineSession(writing: [(CacheItemKey("big"), Self.payload(3))])
    #expect(try read(f) == Self.payload(3), "a sign-in re-seals", sourceLocation: sourceLocation)
  }

  @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 4 * chunk, size + 5])
  func aSealedItemOfEverySizeReadsAndStreamsBack(_ size: Int) throws {
    let f = try fixture(size: size)
    defer { f.root.remove() }
    let file = try f.bytes("cache/items/big")
    #expect(file.count == 56 + size + 16 * CacheSeal.chunkCount(payloadLength: size))
    #expect([UInt8](file)[4] == 3, "written in the chunked version")
    #expect(try read(f) == Self.payload(size))
    #expect(try streamed(f) == Self.payload(size))
  }

  @Test(arguments: [0, 7, 15])
  func aFlippedByteInAnyChunkOrTagIsUnauthentic(_ index: Int) throws {
    let f = try fixture()
    defer { f.root.remove() }
    try f.flip("cache/items/big", at: 56 + index * Self.chunk + 1_000)
    try expectRefused(f, "chunk \(index)")
    try f.flip("cache/items/big", at: 56 + index * Self.chunk + 1_000)
    #expect(try read(f) == Self.payload(Self.size), "restored")
    try f.flip("cache/items/big", at: 56 + Self.size + index * 16 + 3)
    try expectRefused(f, "tag \(index)")
    try recovers(f)
  }

  @Test func swappedDroppedOrAppendedChunksAreUnauthentic() throws {
    let f = try fixture()
    defer { f.root.remove() }
    let original = [UInt8](try f.bytes("cache/items/big"))
    let header = Array(original[0..<56])
    let parts = CacheSealItemTests.parts(original, length: Self.size)
    var swapped = parts
    swapped.swapAt(3, 4)
    let forgeries: [(String, [UInt8])] = [
      ("two chunks swapped", CacheSealItemTests.assemble(header: header, swapped)),
      ("last chunk dropped", CacheSealItemTests.assemble(header: header, Array(parts.dropLast()))),
      ("a chunk appended", CacheSealItemTests.assemble(header: header, parts + [parts[0]])),
    ]
    for (name, forged) in forgeries {
      try f.write(Data(forged), "cache/items/big")
      try expectRefused(f, "\(name)")
    }
    try recovers(f)
  }

  @Test func aChunkFromAnotherGenerationOrStoreIsUnauthentic() throws {
    let f = try fixture()
    defer { f.root.remove() }
    let old = [UInt8](try f.bytes("cache/items/big"))
    f.clock.advance(by: .seconds(60))
    _ = try f.gate().beginOnlineSession(
      writing: [
        (CacheItemKey("big"), Self.payload(Self.size)), (CacheItemKey("token"), Data("t".utf8)),
      ])
    let other = f.root.path + "/other"
    _ = try f.gate(store: other).beginOnlineSession(
      writing: [(CacheItemKey("big"), Self.payload(Self.size))])
    let current = [UInt8](try f.bytes("cache/items/big"))
    let theirs = [UInt8](try Data(contentsOf: URL(fileURLWithPath: other + "/cache/items/big")))
    for (name, source) in [("an older generation", old), ("another store", theirs)] {
      var spliced = CacheSealItemTests.parts(current, length: Self.size)
      spliced[5] = CacheSealItemTests.parts(source, length: Self.size)[5]
      try f.write(
        Data(CacheSealItemTests.assemble(header: Array(current[0..<56]), spliced)),
        "cache/items/big")
      try expectRefused(f, "chunk 5 from \(name)")
    }
    try recovers(f)
  }

  /// An item file as the earlier release wrote it (version 2: one XChaCha20-Poly1305 blob,
  /// bound to the same header, store id and key) reads back, whole and streamed.
  @Test func aVersion2ItemOfAnExistingStoreStillReads() throws {
    let f = try fixture(size: 300_000)
    defer { f.root.remove() }
    let current = [UInt8](try f.bytes("cache/items/big"))
    let index = [UInt8](try f.bytes("cache/index"))
    let keys = SealKeys.of(
      try SealingKey(bytes: try Data(contentsOf: URL(fileURLWithPath: f.keyPath))))
    let storeID = Array(index[40..<48])
    var header = Array(current[0..<56])
    header[4] = 2
    let payload = Self.payload(300_000)
    var file = header + [UInt8](repeating: 0, count: payload.count + 16)
    file.withUnsafeMutableBytes { out in
      payload.withUnsafeBytes { message in
        Sodium.seal(
          message, associatedData: Array(header[0..<32]) + storeID + Array("big".utf8),
          nonce: Array(header[32..<56]), key: keys.items,
          into: UnsafeMutableRawBufferPointer(rebasing: out[56...]))
      }
    }
    try f.write(Data(file), "cache/items/big")
    #expect(try read(f) == payload)
    #expect(try streamed(f) == payload)
    // Relabelled as the chunked version, the same bytes are refused.
    try f.flip("cache/items/big", at: 4)
    try expectRefused(f, "a version-2 item that claims version 3")
  }
}
