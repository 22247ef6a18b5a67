import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// The item served is the item judged: an item file put in place behind the index (a replayed
/// older copy, a crafted later one) is refused at read with its own time.
@Suite struct OfflineCacheReaderServedItemTests {
  typealias Fixture = GateFixture

  static func itemPath(_ f: Fixture, _ key: String) throws -> String {
    let store = try #require(f.cache as? DirectoryCacheStore)
    return store.directory + "/cache/items/" + key
  }

  /// Overwrites an item file in place (the items directory does not change, so the index is
  /// still consistent).
  static func overwriteInPlace(_ path: String, with bytes: Data) throws {
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: bytes)
    try handle.close()
  }

  static func item(_ payload: String, writtenAt: WallClockInstant) -> Data {
    let payloadBytes = Data(payload.utf8)
    let header = payloadBytes.withUnsafeBytes {
      CacheFormat.itemHeader(writtenAt: writtenAt, payload: $0)
    }
    return Data(header) + payloadBytes
  }

  func open(_ f: Fixture) throws -> OfflineCacheReader {
    guard case .opened(let reader) = f.gate.openOffline() else {
      throw CacheStoreError(code: .storeUnusable, reason: "expected the cache to open")
    }
    return reader
  }

  func refusal(_ body: () throws -> Void) -> OfflineReadError? {
    do {
      try body()
      return nil
    } catch {
      return error as? OfflineReadError
    }
  }

  /// The example: an item from a sign-in 10 days ago copied back over the newer one.
  @Test func aTenDayOldItemCopiedBackInPlaceIsTooOldNotFresh() throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try f.signIn(["token": "old"])
    let path = try Self.itemPath(f, "token")
    let old = try Data(contentsOf: URL(fileURLWithPath: path))
    f.clock.advance(by: .seconds(10 * 86_400))
    try f.signIn(["token": "new"])
    try Self.overwriteInPlace(path, with: old)
    let reader = try open(f)
    #expect(reader.decision.isFresh, "the index does not notice: status stays O(1)")
    let error = refusal { _ = try reader.item(forKey: Fixture.key("token")) }
    #expect(error?.reasons == .tooOld)
    #expect(error?.eligibilityReason == .tooOld)
    #expect(error?.reason.contains(Fixture.start.rfc3339) == true, "gives the item's own time")
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old, "left alone")
  }

  @Test func anOlderCopyWithinTheMaxAgeButBeforeTheOldestJudgedIsTooOld() throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try f.signIn(["token": "old"])
    let path = try Self.itemPath(f, "token")
    let old = try Data(contentsOf: URL(fileURLWithPath: path))
    f.clock.advance(by: .seconds(3600))
    try f.signIn(["token": "new", "other": "x"])
    try Self.overwriteInPlace(path, with: old)
    let reader = try open(f)
    #expect(refusal { _ = try reader.item(forKey: Fixture.key("token")) }?.reasons == .tooOld)
    #expect(try reader.item(forKey: Fixture.key("other"))?.payload == Data("x".utf8))
  }

  @Test(arguments: [Int64(1), 3_600_000_000_000])
  func anItemDatedAfterNowIsUnreadable(_ later: Int64) throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try f.signIn(["token": "a"])
    let path = try Self.itemPath(f, "token")
    try Self.overwriteInPlace(
      path,
      with: Self.item(
        "forged",
        writtenAt: WallClockInstant(
          nanosecondsSinceEpoch: Fixture.start.nanosecondsSinceEpoch + later)))
    let reader = try open(f)
    let error = refusal { _ = try reader.item(forKey: Fixture.key("token")) }
    #expect(error?.code == .itemUnreadable)
  }

  /// Newer than the newest item the decision judged is not a refusal: an online session of the
  /// same generation may write after the decision (found by `ConcurrentHonestClockTests`).
  @Test func anItemAnOnlineSessionWroteAfterTheDecisionIsServed() throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    let session = try f.gate.beginOnlineSession()
    try session.write(Fixture.key("token"), Data("first".utf8))
    let reader = try open(f)
    f.clock.advance(by: .seconds(1))
    try session.write(Fixture.key("token"), Data("second".utf8))
    let item = try reader.item(forKey: Fixture.key("token"))
    #expect(item?.payload == Data("second".utf8))
    #expect(item.map { $0.writtenAt > (reader.decision.items?.newest ?? $0.writtenAt) } == true)
  }

  /// An online session of the same generation writing after the read's clocks were taken (but
  /// before the item is read) dates the item after that reading: the read judges again with a
  /// later reading and serves it, whole or streamed (found by `ConcurrentHonestClockTests`, which
  /// saw "written at …001175, after now …001174" on an honest clock).
  @Test(arguments: [false, true])
  func anItemWrittenAfterTheReadsClocksIsJudgedAgainNotRefused(streamed: Bool) throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    let session = try f.gate.beginOnlineSession()
    try session.write(Fixture.key("token"), Data("first".utf8))
    let hooked = HookedCacheStore(f.cache)
    let gate = OfflineAccessGate(
      cache: hooked, marks: f.marks, policy: f.gate.policy, clock: f.clock)
    guard case .opened(let reader) = gate.openOffline() else {
      throw CacheStoreError(code: .storeUnusable, reason: "expected the cache to open")
    }
    hooked.once(at: .beforeTheItem) {
      f.clock.advance(by: .seconds(1))
      #expect((try? session.write(Fixture.key("token"), Data("second".utf8))) != nil)
    }
    let payload: Data?
    if streamed {
      var bytes = Data()
      let header = try reader.read(Fixture.key("token")) { bytes.append(contentsOf: $0) }
      payload = header.map { _ in bytes }
    } else {
      payload = try reader.item(forKey: Fixture.key("token"))?.payload
    }
    #expect(payload == Data("second".utf8))
  }

  @Test func verifyNamesEveryItemThatDisagrees() throws {
    let f = try Fixture(.directory)
    defer { f.remove() }
    try f.signIn(["token": "old", "b": "b"])
    let path = try Self.itemPath(f, "token")
    let old = try Data(contentsOf: URL(fileURLWithPath: path))
    f.clock.advance(by: .seconds(60))
    try f.signIn(["token": "new", "b": "b2", "c": "c"])
    try Self.overwriteInPlace(path, with: old)
    var corrupt = try Data(contentsOf: URL(fileURLWithPath: try Self.itemPath(f, "c")))
    corrupt[corrupt.count - 1] ^= 0xFF
    try Self.overwriteInPlace(try Self.itemPath(f, "c"), with: corrupt)
    let decision = f.gate.checkEligibility()
    #expect(decision.isFresh)
    let verification = f.gate.verifyItems(against: decision)
    #expect(verification.checked == 3)
    #expect(verification.disagreeing.map(\.key?.rawValue) == ["c", "token"])
    #expect(verification.disagreeing.map(\.code) == ["item_unreadable", "too_old"])
  }
}
