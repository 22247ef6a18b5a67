import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct OnlineSessionTests {
  typealias Fixture = GateFixture

  @Test(arguments: Fixture.Backend.allCases)
  func writesAreStampedWithTheWallClockAtWriteTime(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let session = try f.gate.beginOnlineSession()
    f.clock.advance(by: .nanoseconds(1_234_567))
    let stamped = try session.write(Fixture.key("k"), Data("v".utf8))
    #expect(stamped == f.clock.now())
    #expect(try f.cache.item(forKey: Fixture.key("k"))?.writtenAt == f.clock.now())
  }

  @Test(arguments: Fixture.Backend.allCases)
  func beginResetsTheMarkInANewGeneration(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let first = try f.gate.beginOnlineSession()
    f.clock.advance(by: .seconds(1000))
    _ = try f.gate.recordObservation()
    f.clock.moveBack(by: .seconds(2000))
    let second = try f.gate.beginOnlineSession()
    #expect(second.generation == first.generation + 1)
    #expect(f.storedMark == f.clock.now())
  }

  @Test(arguments: Fixture.Backend.allCases)
  func closedSessionRefusesWrites(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let session = try f.gate.beginOnlineSession()
    session.close()
    #expect(session.isClosed)
    #expect {
      try session.write(Fixture.key("k"), Data())
    } throws: { ($0 as? OnlineSessionError)?.code == .closed }
    #expect(try f.cache.summary() == .empty)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func olderSessionIsRefusedOnceANewerOneBegan(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let old = try f.gate.beginOnlineSession()
    let new = try f.gate.beginOnlineSession()
    #expect {
      try old.write(Fixture.key("stale"), Data("x".utf8))
    } throws: { ($0 as? OnlineSessionError)?.code == .superseded }
    #expect { try old.signOut() } throws: { ($0 as? OnlineSessionError)?.code == .superseded }
    try new.write(Fixture.key("current"), Data("y".utf8))
    #expect(try f.cache.keys() == [Fixture.key("current")])
  }

  @Test(arguments: Fixture.Backend.allCases)
  func signOutRemovesItemsButKeepsTheMarkAndGeneration(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let session = try f.signIn(["a": "1", "b": "2"])
    f.clock.advance(by: .seconds(500))
    _ = f.gate.checkEligibility()
    let mark = f.storedMark
    try session.signOut()
    #expect(session.isClosed)
    #expect(try f.cache.summary() == .empty)
    #expect(f.storedMark == mark, "sign-out never resets the mark")
    #expect(try f.marks.read().generation == session.generation)
    #expect(f.gate.checkEligibility().status == .unavailable)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func deleteAndReplaceUpdateTheSummary(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    let session = try f.signIn(["a": "1", "b": "2"])
    f.clock.advance(by: .seconds(10))
    try session.write(Fixture.key("a"), Data("1b".utf8))
    try session.delete(Fixture.key("b"))
    let summary = try f.cache.summary()
    #expect(summary.count == 1)
    #expect(summary.oldest == f.clock.now())
  }

  @Test func failedMarkResetThrowsAndWritesNothing() throws {
    let f = try Fixture()
    f.marks.failNext(.reset, with: ClockMarkStoreError(code: .writeFailed, reason: "EIO"))
    #expect {
      try f.gate.beginOnlineSession()
    } throws: { ($0 as? OnlineSessionError)?.code == .markStoreFailed }
    #expect(f.marks.stored == .absent)
  }

  @Test func failedCommitIsACacheStoreError() throws {
    let f = try Fixture()
    let session = try f.gate.beginOnlineSession()
    let cache = try #require(f.cache as? InMemoryCacheStore)
    cache.failNextCommit(with: CacheStoreError(code: .writeFailed, errno: 28, reason: "ENOSPC"))
    #expect {
      try session.write(Fixture.key("k"), Data())
    } throws: { ($0 as? OnlineSessionError)?.cacheError?.errno == 28 }
  }

  @Test func manyItemsAreOneCommit() throws {
    let f = try Fixture()
    let session = try f.gate.beginOnlineSession()
    let items = (0..<500).map { (Fixture.key("k\($0)"), Data("\($0)".utf8)) }
    try session.write(contentsOf: items)
    let cache = try #require(f.cache as? InMemoryCacheStore)
    #expect(cache.commitCount == 1)
    #expect(try cache.summary().count == 500)
  }
}
