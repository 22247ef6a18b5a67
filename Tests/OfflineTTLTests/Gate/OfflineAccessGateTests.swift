import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

@Suite struct OfflineAccessGateTests {
  typealias Fixture = GateFixture

  @Test func freshDecisionCarriesDeadlineMarkGenerationAndCount() throws {
    let f = try Fixture()
    try f.signIn(["a": "1", "b": "2"])
    f.clock.advance(by: .seconds(30))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .fresh)
    #expect(decision.reasons.isEmpty)
    #expect(decision.now == f.clock.now())
    #expect(decision.deadline == Fixture.start.advanced(by: Fixture.week))
    #expect(decision.mark == f.clock.now())
    #expect(decision.previousMark == Fixture.start)
    #expect(decision.generation == 1)
    #expect(decision.items?.count == 2)
    #expect(decision.markError == nil && decision.cacheError == nil)
  }

  @Test func observesDurablyBeforeGrantingFresh() throws {
    let f = try Fixture()
    try f.signIn()
    f.clock.advance(by: .seconds(5))
    _ = f.gate.checkEligibility()
    #expect(f.storedMark == f.clock.now(), "the mark is stored when fresh is returned")
  }

  @Test func passesThePolicysMarkResolutionInEachObservation() throws {
    let f = try Fixture(markResolution: .seconds(1))
    try f.signIn()
    let writes = f.marks.writeCount
    f.clock.advance(by: .milliseconds(500))
    let skipped = f.gate.checkEligibility()
    #expect(skipped.status == .fresh)
    #expect(f.marks.writeCount == writes, "a rise below the resolution is not written")
    #expect(skipped.mark == f.storedMark, "the decision reports the mark actually stored")
    f.clock.advance(by: .milliseconds(600))
    _ = f.gate.checkEligibility()
    #expect(f.marks.writeCount == writes + 1)
  }

  @Test func reportsEveryReasonThatApplies() throws {
    let f = try Fixture(maxAge: .seconds(10))
    try f.signIn()
    f.clock.advance(by: .seconds(100))
    _ = f.gate.checkEligibility()
    f.marks.setStored(.absent)
    let decision = f.gate.checkEligibility()
    #expect(decision.reasons == [.tooOld, .markMissing])
  }

  @Test func unreadableItemIsExpiredWithTheStoreErrorAndNothingIsDeleted() throws {
    let f = try Fixture()
    try f.signIn(["a": "1", "b": "2"])
    let cache = try #require(f.cache as? InMemoryCacheStore)
    cache.makeUnreadable(Fixture.key("b"))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .itemUnreadable)
    #expect(decision.cacheError?.code == .itemUnreadable)
    #expect(decision.items == nil)
    #expect(cache.allItems.count == 2)
  }

  @Test func storeFailuresNeverThrowAndMapToTheirReasons() throws {
    let f = try Fixture()
    try f.signIn()
    let cases: [(ClockMarkStoreError.Code, EligibilityReasons)] = [
      (.lockFailed, .markNotPersisted), (.storeUnusable, .markNotPersisted),
      (.writeFailed, .markNotPersisted), (.unreadable, .markUnreadable), (.absent, .markMissing),
    ]
    for (code, reason) in cases {
      f.marks.failNext(.observe, with: ClockMarkStoreError(code: code, reason: "injected"))
      let decision = f.gate.checkEligibility()
      #expect(decision.status == .expired)
      #expect(decision.reasons == reason, "\(code)")
      #expect(decision.markError?.code == code)
    }
  }

  @Test func recordObservationAdvancesTheMarkOnly() throws {
    let f = try Fixture()
    try f.signIn()
    let before = try f.snapshot()
    f.clock.advance(by: .seconds(90))
    let transition = try f.gate.recordObservation()
    #expect(transition.current.mark == f.clock.now())
    f.clock.moveBack(by: .seconds(300))
    #expect(try f.gate.recordObservation().current.mark == Fixture.start.advanced(by: .seconds(90)))
    #expect(try f.snapshot() == before)
  }

  @Test func recordObservationBeforeAnySignInThrowsAbsentAndCreatesNothing() throws {
    let f = try Fixture()
    #expect(throws: ClockMarkStoreError.self) { try f.gate.recordObservation() }
    #expect(f.marks.stored == .absent)
  }

  @Test func readsTheClockAtEachCallNeverAtConstruction() throws {
    let f = try Fixture(maxAge: .seconds(60))
    try f.signIn()
    #expect(f.gate.checkEligibility().status == .fresh)
    f.clock.advance(by: .seconds(61))
    #expect(f.gate.checkEligibility().status == .expired)
  }

  @Test func gatesOnManyThreadsNeverLowerTheMark() throws {
    let f = try Fixture()
    try f.signIn()
    let high = Fixture.start.advanced(by: .seconds(1000))!
    f.clock.set(high)
    _ = f.gate.checkEligibility()
    runConcurrently(8) { index in
      let clock = ManualWallClock(Fixture.start.advanced(by: .seconds(Int64(index * 100)))!)
      let gate = OfflineAccessGate(
        cache: f.cache, marks: f.marks, policy: f.gate.policy, clock: clock)
      for _ in 0..<20 { _ = gate.checkEligibility() }
    }
    #expect(f.storedMark == high)
  }

  /// Regression (found by hand: 20 `status` and 20 `sign-in` runs at once refused 17 times with
  /// `clock_behind_mark`, `item_from_future` and `boot_clock_inconsistent`): the clocks must be
  /// read under the mark store's lock, or a concurrent writer's newer mark, items or boot anchor
  /// look like a moved clock. Real clocks, real files, every observation written.
  @Test func concurrentChecksAndSignInsOnTheRealClocksNeverRefuse() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let url = URL(fileURLWithPath: directory.path)
    let policy = try EligibilityPolicy(maxAge: .seconds(86_400), markResolution: .zero)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(at: url), marks: FileClockMarkStore(at: url), policy: policy)
    let first = try gate.beginOnlineSession()
    try first.write(CacheItemKey("token"), Data("0".utf8))
    first.close()
    let refusals = Mutex<[String]>([])
    runConcurrently(8) { index in
      // Each actor has its own gate (as separate processes would), over the same directory.
      let own = OfflineAccessGate(
        cache: DirectoryCacheStore(at: url), marks: FileClockMarkStore(at: url), policy: policy)
      for round in 0..<12 {
        if index < 2 {
          guard let session = try? own.beginOnlineSession() else { continue }
          _ = try? session.write(CacheItemKey("token"), Data("\(index)-\(round)".utf8))
          session.close()
        } else {
          let decision = own.checkEligibility()
          if decision.status != .fresh {
            refusals.withLock { $0.append("\(decision.status) \(decision.reasons)") }
          }
        }
      }
    }
    let refused = refusals.withLock { $0 }
    #expect(
      refused.isEmpty,
      "no clock moved, yet \(refused.count) checks were refused, e.g. \(refused.prefix(3))")
  }
}
