import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// Every scenario of the offline sign-in story, as a named test, on the in-memory cache and on real files.
@Suite struct OfflineSignInScenarioTests {
  typealias Fixture = GateFixture

  @Test(arguments: Fixture.Backend.allCases)
  func expiryBoundaryAgeEqualToMaxAgeIsFreshOneNanosecondMoreIsTooOld(_ backend: Fixture.Backend)
    throws
  {
    let f = try Fixture(backend, maxAge: .seconds(3600))
    defer { f.remove() }
    try f.signIn()
    f.clock.advance(by: .seconds(3600))
    let boundary = f.gate.checkEligibility()
    #expect(boundary.status == .fresh)
    #expect(boundary.deadline == Fixture.start.advanced(by: .seconds(3600)))
    f.clock.advance(by: .nanoseconds(1))
    let after = f.gate.checkEligibility()
    #expect(after.status == .expired)
    #expect(after.reasons == .tooOld)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func futureDatedItemBesideAnOlderValidOneIsRefused(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn(["old": "valid"])
    // A newer item written while the clock ran an hour fast, then the clock was corrected.
    f.clock.advance(by: .seconds(3600))
    let session = try f.gate.beginOnlineSession()
    try session.write(Fixture.key("new"), Data("future".utf8))
    f.clock.moveBack(by: .seconds(3600 - 60))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.itemFromFuture))
    #expect(decision.items?.count == 2)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func repeatedRollbackIsRefusedEveryTimeAndNeverLowersTheMark(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn()
    f.clock.advance(by: .seconds(86_400))
    #expect(f.gate.checkEligibility().status == .fresh)
    let high = try #require(f.storedMark)
    for _ in 0..<2 {
      f.clock.moveBack(by: .seconds(3600))
      let decision = f.gate.checkEligibility()
      #expect(decision.status == .expired)
      #expect(decision.reasons == .clockBehindMark)
      #expect(decision.mark == high)
      #expect(f.storedMark == high, "a rollback never lowers the mark")
    }
  }

  @Test(arguments: Fixture.Backend.allCases)
  func openRechecksAfterTheDeadlinePassedWhileALoginScreenHeldAFreshDecision(
    _ backend: Fixture.Backend
  ) throws {
    let f = try Fixture(backend, maxAge: .seconds(600))
    defer { f.remove() }
    try f.signIn()
    let shownOnLoginScreen = f.gate.checkEligibility()
    #expect(shownOnLoginScreen.status == .fresh)
    f.clock.advance(by: .seconds(601))
    guard case .refused(let decision) = f.gate.openOffline() else {
      Issue.record("opened with a stale decision")
      return
    }
    #expect(decision.reasons == .tooOld)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func onlineSignInRecoversFromAFastClockThatWasCorrected(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn()
    f.clock.advance(by: .seconds(365 * 86_400))  // the clock ran a year fast
    #expect(f.gate.checkEligibility().status == .expired)
    f.clock.set(Fixture.start.advanced(by: .seconds(60))!)  // corrected
    let stuck = f.gate.checkEligibility()
    #expect(stuck.reasons.contains(.clockBehindMark))
    let session = try f.signIn(["token": "fresh"])
    #expect(session.record.mark == f.clock.now(), "sign-in lowers the mark to now")
    #expect(session.generation == 2)
    let recovered = f.gate.checkEligibility()
    #expect(recovered.status == .fresh)
    #expect(recovered.generation == 2)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func missingMarkWithItemsIsExpiredAndCreatesNothing(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn()
    f.marks.setStored(.absent)
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .markMissing)
    #expect(decision.markError?.code == .absent)
    #expect(f.marks.stored == .absent)
  }

  @Test(arguments: Fixture.Backend.allCases)
  func missingMarkWithTrustOnFirstUseCreatesTheFirstMark(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend, trustOnFirstUse: true)
    defer { f.remove() }
    try f.signIn()
    f.marks.setStored(.absent)
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .fresh)
    #expect(decision.generation == 0)
    #expect(f.storedMark == f.clock.now())
  }

  /// Trust-on-first-use racing another process that creates the first mark between this check's
  /// failed observation and its `createFirstMark`: the other mark is observed under the lock like
  /// any existing mark, with the clocks read there (no clock was read before), so no rollback is
  /// seen; the first reading equals their mark, the latest an honest process can have written.
  @Test func firstMarkCreatedByAnotherProcessMeanwhileIsObservedNotCalledARollback() throws {
    let f = try Fixture(.memory, trustOnFirstUse: true)
    defer { f.remove() }
    try f.signIn()
    let clock = TickingWallClock(Fixture.start.advanced(by: .seconds(61))!)
    let theirs = ClockMarkRecord.afterOnlineSignIn(
      generation: 0, at: ClockObservation(wall: Fixture.start.advanced(by: .seconds(62))!))
    f.marks.setStored(.record(theirs))
    f.marks.failNext(.observe, with: ClockMarkStoreError(code: .absent, reason: "not yet created"))
    let gate = OfflineAccessGate(
      cache: f.cache, marks: f.marks, policy: f.gate.policy, clock: clock, bootClock: nil)
    let decision = gate.checkEligibility()
    #expect(decision.status == .fresh, "\(decision.reasons)")
    #expect(decision.generation == 0)
    #expect(try #require(f.storedMark) >= theirs.mark, "their mark is never lowered")
  }

  @Test(arguments: Fixture.Backend.allCases)
  func unreadableMarkIsExpiredAndItsStateIsLeftAlone(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend, trustOnFirstUse: true)
    defer { f.remove() }
    try f.signIn()
    f.marks.setStored(.unreadable(.badChecksum))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .markUnreadable)
    #expect(decision.markError?.unreadableReason == .badChecksum)
    #expect(f.marks.stored == .unreadable(.badChecksum), "trust-on-first-use never replaces it")
  }

  @Test(arguments: Fixture.Backend.allCases)
  func failedMarkWriteIsExpiredAndKeepsTheOldMark(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn()
    let old = f.storedMark
    f.clock.advance(by: .seconds(60))
    f.marks.failNext(
      .observeWrite, with: ClockMarkStoreError(code: .writeFailed, errno: 28, reason: "ENOSPC"))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .markNotPersisted)
    #expect(decision.markError?.errno == 28)
    #expect(f.storedMark == old)
    #expect(f.gate.checkEligibility().status == .fresh, "the next durable observation grants")
  }

  @Test(arguments: Fixture.Backend.allCases)
  func expiryRollbackAndFailuresLeaveEveryItemIntact(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend, maxAge: .seconds(3600))
    defer { f.remove() }
    try f.signIn(["a": "alpha", "b": "beta", "c": ""])
    let before = try f.snapshot()
    f.clock.advance(by: .seconds(7200))
    _ = f.gate.checkEligibility()
    _ = f.gate.openOffline()
    f.clock.moveBack(by: .seconds(86_400))
    _ = f.gate.checkEligibility()
    _ = f.gate.openOffline()
    _ = try? f.gate.recordObservation()
    f.marks.setStored(.unreadable(.truncated))
    _ = f.gate.checkEligibility()
    f.marks.setStored(.absent)
    _ = f.gate.checkEligibility()
    #expect(try f.snapshot() == before, "bytes and writtenAt unchanged")
  }

  @Test(arguments: Fixture.Backend.allCases)
  func emptyCacheIsUnavailableAndWritesNothing(_ backend: Fixture.Backend) throws {
    let f = try Fixture(backend)
    defer { f.remove() }
    #expect(f.gate.checkEligibility().status == .unavailable)
    #expect(f.marks.writeCount == 0)
    let session = try f.signIn([:])
    let writes = f.marks.writeCount
    f.clock.advance(by: .seconds(10))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .unavailable)
    #expect(decision.mark == session.record.mark)
    #expect(f.marks.writeCount == writes, "no items: mark unchanged")
  }
}

/// A wall clock that moves forward one second each time it is read.
private final class TickingWallClock: WallClock {
  private let current: Mutex<WallClockInstant>
  init(_ start: WallClockInstant) { current = Mutex(start) }
  func now() -> WallClockInstant {
    current.withLock {
      $0 = $0.advanced(by: .seconds(1))!
      return $0
    }
  }
}
