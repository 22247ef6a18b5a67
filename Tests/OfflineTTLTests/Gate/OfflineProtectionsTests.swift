import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// The decision names the protections it applied; evidence the configuration asks for and cannot
/// get (the boot clock, with the floor on) is a refusal, `boot_clock_unavailable`, at a check, at
/// an open, at every reader recheck, and after a sign-in that had no boot clock.
@Suite struct OfflineProtectionsTests {
  struct Setup {
    let wall = ManualWallClock(GateFixture.start)
    let boot = ManualBootClock(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(100))
    let marks = InMemoryClockMarkStore()
    let cache = InMemoryCacheStore()
    let gate: OfflineAccessGate

    init(floor: Bool = true) throws {
      gate = OfflineAccessGate(
        cache: cache, marks: marks,
        policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: floor),
        clock: wall, bootClock: boot)
    }

    func signIn() throws {
      try gate.beginOnlineSession().write("token", Data("secret".utf8))
    }
  }

  @Test func aFreshDecisionWithTheFloorNamesBothProtectionsActive() throws {
    let s = try Setup()
    try s.signIn()
    let decision = s.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.protections == OfflineProtections(markRule: .active, bootClockFloor: .active))
  }

  @Test func theFloorTurnedOffIsReportedOff() throws {
    let s = try Setup(floor: false)
    try s.signIn()
    s.boot.makeUnavailable()
    let decision = s.gate.checkEligibility()
    #expect(decision.isFresh, "without the floor, no boot clock is needed")
    #expect(decision.protections.bootClockFloor == .off)
    #expect(decision.floorCheck == nil)
  }

  @Test func aBootClockThatFailsAtACheckRefusesWithBootClockUnavailable() throws {
    let s = try Setup()
    try s.signIn()
    s.wall.advance(by: .seconds(10))
    s.boot.makeUnavailable()
    let decision = s.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .bootClockUnavailable)
    #expect(decision.protections.bootClockFloor == .unavailable)
    #expect(decision.protections.markRule == .active)
    guard case .refused(let refused) = s.gate.openOffline() else {
      Issue.record("opened without a boot clock")
      return
    }
    #expect(refused.reasons == .bootClockUnavailable)
  }

  @Test func aBootClockThatFailsAtSignInRefusesTheWholeGeneration() throws {
    let s = try Setup()
    s.boot.makeUnavailable()
    try s.signIn()
    let record = try s.marks.read()
    #expect(!record.floor.isAnchored, "the sign-in had no boot clock to anchor the floor")
    // The boot clock is back, but the floor of this generation was never anchored.
    s.boot.set(BootClockReading(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(200)))
    let decision = s.gate.checkEligibility()
    #expect(decision.reasons == .bootClockUnavailable)
    #expect(decision.protections.bootClockFloor == .unavailable)
    // A sign-in with the boot clock recovers.
    try s.signIn()
    #expect(s.gate.checkEligibility().isFresh)
  }

  @Test func aReaderRefusesOnceTheBootClockIsGone() throws {
    let s = try Setup()
    try s.signIn()
    guard case .opened(let reader) = s.gate.openOffline() else {
      Issue.record("a fresh cache did not open")
      return
    }
    #expect(try reader.item(forKey: "token") != nil)
    s.boot.makeUnavailable()
    #expect {
      try reader.item(forKey: "token")
    } throws: { error in
      guard let error = error as? OfflineReadError else { return false }
      return error.reasons == .bootClockUnavailable && error.code == .refused
    }
  }

  @Test func anUnreadableMarkMakesTheMarkRuleUnavailable() throws {
    let s = try Setup()
    try s.signIn()
    s.marks.setStored(.unreadable(.badChecksum))
    let decision = s.gate.checkEligibility()
    #expect(decision.reasons == .markUnreadable)
    #expect(decision.protections.markRule == .unavailable)
  }

  @Test func theEffectiveTimeIsTheFloorWhenTheWallClockIsHeld() throws {
    let s = try Setup()
    try s.signIn()
    s.boot.advance(by: .seconds(1))  // within the tolerance: still fresh, judged from the floor
    let decision = s.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.now == GateFixture.start)
    #expect(decision.effectiveNow == GateFixture.start.advanced(by: .seconds(1)))
    #expect(decision.remaining == .seconds(3_599))
  }

  @Test func freshForAtLeastIsJudgedFromTheEffectiveTime() throws {
    let s = try Setup()
    try s.signIn()
    s.wall.advance(by: .seconds(3_000))
    s.boot.advance(by: .seconds(3_000))
    let decision = s.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.isFresh(forAtLeast: .seconds(600)))
    #expect(!decision.isFresh(forAtLeast: .seconds(601)))
    #expect(s.gate.isFresh(forAtLeast: .seconds(599)))
    s.boot.advance(by: .seconds(1))  // the floor one second ahead of the held wall clock
    #expect(!s.gate.isFresh(forAtLeast: .seconds(600)))
    s.wall.advance(by: .seconds(700))
    s.boot.advance(by: .seconds(700))
    #expect(!s.gate.checkEligibility().isFresh(forAtLeast: .zero), "expired is never fresh")
  }
}
