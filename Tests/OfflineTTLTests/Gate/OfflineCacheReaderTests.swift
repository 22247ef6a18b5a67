import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct OfflineCacheReaderTests {
  typealias Fixture = GateFixture

  func open(_ f: Fixture) throws -> OfflineCacheReader {
    guard case .opened(let reader) = f.gate.openOffline() else {
      throw CacheStoreError(code: .storeUnusable, reason: "expected the cache to open")
    }
    return reader
  }

  @Test(arguments: Fixture.Backend.allCases)
  func readsItemsExactlyAsWritten(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn(["token": "secret", "profile": "{}"])
    let reader = try open(f)
    #expect(reader.decision.isFresh)
    let item = try #require(try reader.item(forKey: Fixture.key("token")))
    #expect(item.payload == Data("secret".utf8))
    #expect(item.writtenAt == Fixture.start)
    #expect(try reader.keys().map(\.rawValue) == ["profile", "token"])
    #expect(try reader.item(forKey: Fixture.key("absent")) == nil)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func refusesReadsAfterItsDeadline(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend, maxAge: .seconds(60))
    defer { f.remove() }
    try f.signIn()
    let reader = try open(f)
    f.clock.advance(by: .seconds(61))
    #expect {
      try reader.item(forKey: Fixture.key("token"))
    } throws: { ($0 as? OfflineReadError)?.code == .deadlinePassed }
  }

  @Test(arguments: Fixture.Backend.allCases)
  func refusesReadsOnceTheClockWentBehindTheMark(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn()
    f.clock.advance(by: .seconds(100))
    let reader = try open(f)
    f.clock.moveBack(by: .seconds(1))
    #expect {
      try reader.item(forKey: Fixture.key("token"))
    } throws: { ($0 as? OfflineReadError)?.code == .clockBehindMark }
  }

  @Test func refusesWhenAnotherProcessRaisedTheMarkPastNow() throws {
    let f = try Fixture()
    try f.signIn()
    let reader = try open(f)
    // Another process (its own clock an hour ahead) observed a higher mark.
    let other = ManualWallClock(Fixture.start.advanced(by: .seconds(3600))!)
    _ = OfflineAccessGate(cache: f.cache, marks: f.marks, policy: f.gate.policy, clock: other)
      .checkEligibility()
    #expect {
      try reader.keys()
    } throws: { ($0 as? OfflineReadError)?.code == .clockBehindMark }
  }

  @Test func refusesWhenTheMarkBecameUnreadable() throws {
    let f = try Fixture()
    try f.signIn()
    let reader = try open(f)
    f.marks.setStored(.unreadable(.badChecksum))
    #expect {
      try reader.item(forKey: Fixture.key("token"))
    } throws: { ($0 as? OfflineReadError)?.code == .markUnreadable }
  }

  @Test func unreadableItemIsReportedAndKept() throws {
    let f = try Fixture()
    try f.signIn(["a": "1", "b": "2"])
    let reader = try open(f)
    let cache = try #require(f.cache as? InMemoryCacheStore)
    cache.makeUnreadable(Fixture.key("b"))
    #expect {
      try reader.item(forKey: Fixture.key("b"))
    } throws: { ($0 as? OfflineReadError)?.code == .itemUnreadable }
    #expect(cache.allItems.count == 2)
  }

  @Test func refusalCarriesTheDecision() throws {
    let f = try Fixture()
    guard case .refused(let decision) = f.gate.openOffline() else {
      Issue.record("opened an empty cache")
      return
    }
    #expect(decision.status == .unavailable)
  }
}
