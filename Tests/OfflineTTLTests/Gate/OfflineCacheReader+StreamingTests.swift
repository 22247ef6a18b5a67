import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// The streamed read hands out exactly the item, only after its header and checksum passed,
/// through a buffer of the chunk size.
@Suite struct OfflineCacheReaderStreamingTests {
  typealias Fixture = GateFixture

  /// Bytes that differ at every position's neighbourhood (a linear congruential sequence).
  static func payload(count: Int, seed: UInt32) -> Data {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices {
      state = state &* 1_664_525 &+ 1_013_904_223
      bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
    }
    return Data(bytes)
  }

  static func signIn(_ f: Fixture, _ items: [(String, Data)]) throws {
    let session = try f.gate.beginOnlineSession()
    try session.write(contentsOf: items.map { (Fixture.key($0.0), $0.1) })
  }

  static func open(_ f: Fixture) throws -> OfflineCacheReader {
    guard case .opened(let reader) = f.gate.openOffline() else {
      throw CacheStoreError(code: .storeUnusable, reason: "expected the cache to open")
    }
    return reader
  }

  /// What a streamed read handed out.
  struct Streamed {
    var starts: [CacheItemHeader] = []
    var chunks: [Int] = []
    var bytes = Data()
  }

  static func stream(_ reader: OfflineCacheReader, _ key: String, chunkSize: Int) throws
    -> (CacheItemHeader?, Streamed)
  {
    var streamed = Streamed()
    var startedFirst = true
    let header = try reader.read(
      Fixture.key(key), chunkSize: chunkSize,
      start: { streamed.starts.append($0) },
      into: { chunk in
        if streamed.starts.count != 1 { startedFirst = false }
        streamed.chunks.append(chunk.count)
        streamed.bytes.append(contentsOf: chunk)
      })
    #expect(startedFirst, "start comes once, before the first chunk")
    return (header, streamed)
  }

  @Test(arguments: Fixture.Backend.allCases, [1, 7, 4096, 3 << 18])
  func streamedBytesEqualTheItem(_ backend: Fixture.Backend, chunkSize: Int) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let payload = Self.payload(count: 100_003, seed: 7)
    try Self.signIn(f, [("big", payload), ("empty", Data())])
    let reader = try Self.open(f)
    let whole = try #require(try reader.item(forKey: Fixture.key("big")))
    let (header, streamed) = try Self.stream(reader, "big", chunkSize: chunkSize)
    #expect(streamed.bytes == payload)
    #expect(streamed.bytes == whole.payload)
    #expect(
      header == CacheItemHeader(key: Fixture.key("big"), writtenAt: Fixture.start, size: 100_003))
    #expect(streamed.starts == [header].compactMap { $0 })
    #expect(
      streamed.chunks.dropLast().allSatisfy { $0 == chunkSize }, "every chunk but the last is full")
    #expect(streamed.chunks.allSatisfy { $0 > 0 && $0 <= chunkSize })
    let (emptyHeader, empty) = try Self.stream(reader, "empty", chunkSize: chunkSize)
    #expect(emptyHeader?.size == 0)
    #expect(empty.starts.count == 1, "start runs once for an empty item too")
    #expect(empty.chunks.isEmpty)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func aMissingKeyIsNilAndCallsNothing(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try Self.signIn(f, [("token", Data("x".utf8))])
    let (header, streamed) = try Self.stream(try Self.open(f), "other", chunkSize: 7)
    #expect(header == nil)
    #expect(streamed.starts.isEmpty && streamed.chunks.isEmpty)
  }

  /// A flipped payload byte anywhere (first chunk, middle, last byte) is refused before any
  /// byte is handed out, and the item is left alone.
  @Test(arguments: [0, 50_000, 100_002])
  func aCorruptedPayloadIsRefusedBeforeAnyChunk(_ offset: Int) throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try Self.signIn(f, [("big", Self.payload(count: 100_003, seed: 3))])
    let path = try #require(f.cache as? DirectoryCacheStore).directory + "/cache/items/big"
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[CacheFormat.itemHeaderSize + offset] ^= 0x01
    try bytes.write(to: URL(fileURLWithPath: path))
    let reader = try Self.open(f)
    var handedOut = 0
    var started = false
    #expect {
      _ = try reader.read(
        Fixture.key("big"), chunkSize: 4096, start: { _ in started = true },
        into: { handedOut += $0.count })
    } throws: { error in
      (error as? OfflineReadError)?.reasons == .itemUnreadable
        && (error as? OfflineReadError)?.storeError?.code == .itemUnreadable
    }
    #expect(handedOut == 0 && !started)
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "left alone")
  }

  /// The header is judged before the payload is read: an older copy put in place behind the
  /// index is refused (too old) with nothing handed out.
  @Test func anOlderCopyInPlaceIsRefusedBeforeAnyChunk() throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try Self.signIn(f, [("token", Data("old".utf8))])
    let path = try #require(f.cache as? DirectoryCacheStore).directory + "/cache/items/token"
    let old = try Data(contentsOf: URL(fileURLWithPath: path))
    f.clock.advance(by: .seconds(10 * 86_400))
    try Self.signIn(f, [("token", Data("new".utf8))])
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: old)
    try handle.close()
    let reader = try Self.open(f)
    var handedOut = 0
    #expect {
      _ = try reader.read(Fixture.key("token"), chunkSize: 1, into: { handedOut += $0.count })
    } throws: { ($0 as? OfflineReadError)?.reasons == .tooOld }
    #expect(handedOut == 0)
  }

  /// An error thrown by the caller's handler comes back unchanged and stops the read.
  @Test func theHandlersErrorStopsTheReadUnchanged() throws {
    struct Stop: Error {}
    let f = try Fixture(.directory)
    defer { f.remove() }
    try Self.signIn(f, [("big", Self.payload(count: 10_000, seed: 1))])
    let reader = try Self.open(f)
    var calls = 0
    #expect(throws: Stop.self) {
      _ = try reader.read(Fixture.key("big"), chunkSize: 100) { _ in
        calls += 1
        if calls == 3 { throw Stop() }
      }
    }
    #expect(calls == 3)
  }
}
