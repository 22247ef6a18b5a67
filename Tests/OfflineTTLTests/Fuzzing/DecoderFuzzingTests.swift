import Foundation
import Testing

@_spi(SystemCalls) @testable import OfflineTTL

/// Every saved fuzz input still keeps every promise, and each crash the fuzzer found is pinned
/// by name with the other members of its kind.
@Suite struct DecoderFuzzingTests {
  @Test(arguments: ["mark-record", "cache-index", "item-header", "sealed-item-header", "rfc3339"])
  func everySavedInputKeepsEveryPromise(target: String) throws {
    let inputs = FuzzCorpus.inputs(target)
    try #require(inputs.count >= 3, "Fuzz/Corpus/\(target) has its starting inputs")
    let run: ([UInt8]) -> [String] =
      switch target {
      case "mark-record": DecoderFuzzing.markRecord
      case "cache-index": DecoderFuzzing.cacheIndex
      case "item-header": DecoderFuzzing.itemHeader
      case "sealed-item-header": DecoderFuzzing.sealedItemHeader
      default: DecoderFuzzing.rfc3339
      }
    for input in inputs {
      #expect(run(input.bytes) == [], "\(target)/\(input.name)")
    }
  }

  /// The sealed item header's starting inputs reach both sides of the decoder: each `-raw` one
  /// (a header and the exact file size it implies) is accepted with its length, and those that
  /// break a rule are refused as unauthentic, or as unsealed when they do not start like a
  /// sealed item.
  @Test func theSealedItemHeaderSeedsReachTheAcceptingPathAndEachRefusal() throws {
    func decode(_ name: String) throws -> Result<CacheSeal.ItemHeader, CacheSeal.Failure> {
      let input = try #require(
        FuzzCorpus.inputs("sealed-item-header").first { $0.name == name }, "\(name)"
      ).bytes
      let size = Int64(bitPattern: Array(input[1..<9]).littleEndianUInt64(at: 0))
      return CacheSeal.decodeItemHeader(Array(input[9...]), fileSize: size)
    }
    for (name, length) in [
      ("v3-small-raw", 100), ("v3-four-chunks-raw", 200_000), ("v2-one-blob-raw", 70_000),
      ("v3-empty-raw", 0), ("v3-largest-raw", 1 << 30),
    ] {
      guard case .success(let header) = try decode(name) else {
        Issue.record("\(name) was refused")
        continue
      }
      #expect(header.payloadLength == length, "\(name)")
    }
    for name in ["truncated", "negative-size", "size-one-chunk-short", "extremes"] {
      guard case .failure(.unauthentic) = try decode(name) else {
        Issue.record("\(name) was not refused as unauthentic")
        continue
      }
    }
    guard case .failure(.unsealed) = try decode("unsealed-version-1") else {
      Issue.record("a version-1 item was not called unsealed")
      return
    }
  }

  /// An index body entry: `writtenAt`, key length, key bytes.
  func body(_ keys: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for key in keys {
      bytes.appendLittleEndian(Int64(42))
      bytes.append(UInt8(key.count))
      bytes += key
    }
    return bytes
  }

  // Found by the cache-index target: a body key of invalid UTF-8 was decoded with replacement
  // characters (3 bytes each), so 255 such bytes became a 765-byte "key" that the next commit's
  // index encoder could not write (a trap), and keys no writer makes were carried forward.
  @Test(arguments: [
    [UInt8](repeating: 0xFF, count: 255),  // invalid UTF-8, longer than 255 once replaced
    [0xC0, 0x80],  // overlong NUL
    [0xED, 0xA0, 0x80],  // a surrogate
    [],  // empty
    Array("..".utf8), Array(".".utf8), Array("a/b".utf8), [0x61, 0x00], [0x61, 0x1B],
    Array("e\u{301}".utf8),  // not NFC
  ])
  func anIndexBodyWithAKeyNoWriterMakesIsRebuilt(key: [UInt8]) {
    #expect(DirectoryCacheStore.decodeIndexBody(body([Array("good".utf8), key])) == nil)
    #expect(DirectoryCacheStore.decodeIndexBody(body([Array("good".utf8)]))?.count == 1)
  }

  @Test func anIndexWhoseBodyDisagreesWithItsHeaderIsRebuilt() throws {
    var catalog = CacheCatalog()
    catalog.entries = ["a": WallClockInstant(nanosecondsSinceEpoch: 5)]
    let encoded = DirectoryCacheStore.encodeIndex(catalog, stamp: DirectoryStamp())
    let header = try #require(
      DirectoryCacheStore.decodeIndexHeader(Array(encoded[0..<CacheFormat.indexHeaderSize])))
    let goodBody = Array(encoded[CacheFormat.indexHeaderSize...])
    #expect(
      DirectoryCacheStore.decodeIndexBody(goodBody, header: header)?.entries == catalog.entries)
    // Same length and count, another time: the checksum is fixed up, the summary is not.
    var other = CacheCatalog()
    other.entries = ["a": WallClockInstant(nanosecondsSinceEpoch: 6)]
    let otherBody = Array(
      DirectoryCacheStore.encodeIndex(other, stamp: DirectoryStamp())[
        CacheFormat.indexHeaderSize...])
    let forged = CacheIndexHeader(
      summary: header.summary, stamp: header.stamp, bodyLength: header.bodyLength,
      bodyChecksum: CacheFormat.crc(otherBody[...]))
    #expect(DirectoryCacheStore.decodeIndexBody(otherBody, header: forged) == nil)
  }

  /// The saved input with a sign-in id in both slots (version 1 at 76..<92, version 3 at
  /// 236..<252) loads the newest slot with its id and keeps every promise.
  @Test func theSavedSignInIDInputLoadsWithItsID() throws {
    let input = try #require(
      FuzzCorpus.inputs("mark-record").first { $0.name == "sign-in-id-raw" })
    let file = Array(input.bytes.dropFirst())
    let loaded = try FileClockMarkStore.newest(in: file, fd: FileDescriptor(rawValue: -1))
    #expect(loaded.sequence == 6)
    #expect(loaded.record.signInID == SignInID(bytes: Array(1...16).map(UInt8.init)))
    #expect(loaded.record.machine == MachineID(high: 11, low: 12))
    guard case .valid(_, let first) = MarkRecordCodec.decode(file[0..<4096]) else {
      Issue.record("the version-1 slot did not decode")
      return
    }
    #expect(first.signInID == loaded.record.signInID)
    #expect(DecoderFuzzing.markRecord(input.bytes) == [])
  }
}
