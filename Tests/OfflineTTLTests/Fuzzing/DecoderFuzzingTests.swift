import Foundation
import Testing

@_spi(SystemCalls) @testable import OfflineTTL

/// Every saved fuzz input still keeps every promise, and each crash the fuzzer found is pinned
/// by name with the other members of its kind.
@Suite struct DecoderFuzzingTests {
  @Test(arguments: ["mark-record", "cache-index", "item-header", "rfc3339"])
  func everySavedInputKeepsEveryPromise(target: String) throws {
    let inputs = FuzzCorpus.inputs(target)
    try #require(inputs.count >= 3, "Fuzz/Corpus/\(target) has its starting inputs")
    let run: ([UInt8]) -> [String] =
      switch target {
      case "mark-record": DecoderFuzzing.markRecord
      case "cache-index": DecoderFuzzing.cacheIndex
      case "item-header": DecoderFuzzing.itemHeader
      default: DecoderFuzzing.rfc3339
      }
    for input in inputs {
      #expect(run(input.bytes) == [], "\(target)/\(input.name)")
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
