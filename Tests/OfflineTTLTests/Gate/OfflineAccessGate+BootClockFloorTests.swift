import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// The gate with the boot-clock floor on, over in-memory stores and manual wall and boot clocks.
private struct FloorGate {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let day = Duration.seconds(86_400)

  let wall = ManualWallClock(FloorGate.start)
  let boot = ManualBootClock(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(100))
  let marks = InMemoryClockMarkStore()
  let cache = InMemoryCacheStore()
  let gate: OfflineAccessGate

  init(maxAge: Duration = FloorGate.day, usesBootClockFloor: Bool = true) throws {
    let policy = try EligibilityPolicy(maxAge: maxAge, usesBootClockFloor: usesBootClockFloor)
    gate = OfflineAccessGate(
      cache: cache, marks: marks, policy: policy, clock: wall, bootClock: boot)
  }

  func signIn() throws {
    let session = try gate.beginOnlineSession()
    try session.write(CacheItemKey("token"), Data("secret".utf8))
  }
}

@Suite struct OfflineAccessGateBootClockFloorTests {
  @Test func heldWallClockIsRefusedWithTheFloorsValues() throws {
    let f = try FloorGate()
    try f.signIn()
    f.wall.advance(by: .seconds(1))
    f.boot.advance(by: FloorGate.day * 2)
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == [.tooOld, .clockBehindElapsedTime])
    let check = try #require(decision.floorCheck)
    #expect(check.floor == FloorGate.start.saturatingAdvanced(by: FloorGate.day * 2))
    #expect(check.wall == FloorGate.start.saturatingAdvanced(by: .seconds(1)))
    #expect(check.toleranceNanoseconds == 2_000_000_000 + 86_400_000_000)
    #expect(check.effectiveClock == .floor)
    #expect(decision.floor?.anchorBootID == BootID(high: 5, low: 5))
  }

  @Test func refusedObservationIsStillPersisted() throws {
    let f = try FloorGate(maxAge: FloorGate.day * 7)
    try f.signIn()
    f.boot.advance(by: FloorGate.day)
    #expect(f.gate.checkEligibility().reasons == .clockBehindElapsedTime)
    let stored = try f.marks.read()
    #expect(stored.floor.lowerBound == FloorGate.start.saturatingAdvanced(by: FloorGate.day))
    #expect(stored.floor.anchorSinceBoot == .seconds(100) + FloorGate.day)
  }

  @Test func floorOffIsTheMarkRuleAloneButTheFloorStillAdvances() throws {
    let f = try FloorGate(usesBootClockFloor: false)
    try f.signIn()
    f.wall.advance(by: .seconds(1))
    f.boot.advance(by: FloorGate.day * 2)
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .fresh)
    #expect(decision.floorCheck == nil)
    #expect(
      try f.marks.read().floor.lowerBound
        == FloorGate.start.saturatingAdvanced(by: FloorGate.day * 2))
  }

  @Test func readerRefusesPastItsDeadlineByTheBootClock() throws {
    let f = try FloorGate()
    try f.signIn()
    guard case .opened(let reader) = f.gate.openOffline() else {
      Issue.record("expected the cache to open")
      return
    }
    f.boot.advance(by: FloorGate.day)  // exactly max age of real time: still fresh
    #expect(try reader.item(forKey: try CacheItemKey("token")) != nil)
    f.boot.advance(by: .nanoseconds(1))  // the wall clock never moved
    #expect {
      try reader.item(forKey: try CacheItemKey("token"))
    } throws: { ($0 as? OfflineReadError)?.code == .deadlinePassed }
  }

  @Test func bootClockGoingBackwardIsRefusedUntilSignIn() throws {
    let f = try FloorGate()
    try f.signIn()
    f.boot.moveBack(by: .seconds(5))
    #expect(f.gate.checkEligibility().reasons == .bootClockInconsistent)
    #expect(try f.marks.read().floor.isUntrusted)
    try f.signIn()
    #expect(f.gate.checkEligibility().status == .fresh)
  }

  @Test func markNotPersistedStillCarriesTheFloorsReasons() throws {
    let f = try FloorGate()
    try f.signIn()
    f.boot.advance(by: FloorGate.day * 2)
    f.marks.failNext(
      .observeWrite, with: ClockMarkStoreError(code: .writeFailed, errno: 28, reason: "disk full"))
    let decision = f.gate.checkEligibility()
    #expect(decision.reasons == [.tooOld, .markNotPersisted, .clockBehindElapsedTime])
    #expect(decision.floorCheck?.floor == FloorGate.start.saturatingAdvanced(by: FloorGate.day * 2))
    #expect(try f.marks.read().floor.lowerBound == FloorGate.start, "nothing was written")
  }

  @Test func noBootClockAtTheSignInIsARefusalNotASilentlyMissingFloor() throws {
    let f = try FloorGate()
    f.boot.makeUnavailable()
    try f.signIn()
    f.wall.advance(by: .seconds(60))
    let decision = f.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .bootClockUnavailable)
    #expect(decision.protections.bootClockFloor == .unavailable)
    #expect(decision.floorCheck == nil)
    #expect(decision.floor?.isAnchored == false)
  }
}
