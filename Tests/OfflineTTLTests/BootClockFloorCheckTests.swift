import OfflineTTL
import OfflineTTLTesting
import Testing

/// The floor layer driven by manual wall and boot clocks, the way the gate drives it: observe
/// (mark and floor advance, refused or not), then the eligibility rule, then the floor check.
private struct FloorScenario {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let bootA = BootID(high: 0xA, low: 0xA)
  static let bootB = BootID(high: 0xB, low: 0xB)

  let wall = ManualWallClock(FloorScenario.start)
  let boot = ManualBootClock(bootID: FloorScenario.bootA, sinceBoot: .seconds(300))
  let policy: EligibilityPolicy
  let items: ItemTimeSummary
  var record: ClockMarkRecord

  /// Signs in online at the start and writes one item then.
  init(policy: EligibilityPolicy) {
    self.policy = policy
    self.items = ItemTimeSummary(writtenAt: [FloorScenario.start])
    self.record = .afterOnlineSignIn(
      generation: 1, at: ClockObservation(wall: FloorScenario.start, boot: boot.now()))
  }

  /// Advances both clocks together by `duration` (a correct wall clock).
  func pass(_ duration: Duration) {
    wall.advance(by: duration)
    boot.advance(by: duration)
  }

  /// One decision: observe, evaluate with the eligibility rule, then apply the floor.
  mutating func decide() -> (
    markRule: EligibilityEvaluation, combined: EligibilityEvaluation, check: BootClockFloorCheck
  ) {
    let now = wall.now()
    let markRule = policy.evaluate(items, now: now, mark: record.mark)
    record = record.observing(ClockObservation(wall: now, boot: boot.now()))
    let check = BootClockFloorCheck(record: record, wall: now, items: items, policy: policy)
    return (markRule, check.applied(to: markRule), check)
  }
}

private let day = Duration.seconds(86_400)

@Suite struct BootClockFloorCheckTests {
  @Test func heldWallClockExpiresAfterMaxAgeOfBootTime() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day))
    scenario.wall.advance(by: .seconds(1))  // one second after sign-in, then held still
    scenario.boot.advance(by: day * 2)
    let result = scenario.decide()
    #expect(result.markRule.status == .fresh)  // the mark rule alone is fooled
    #expect(result.combined.status == .expired)
    #expect(result.combined.reasons == [.tooOld, .clockBehindElapsedTime])
    #expect(result.check.floor == FloorScenario.start.saturatingAdvanced(by: day * 2))
    #expect(result.check.effectiveNow == result.check.floor)
    #expect(result.check.effectiveClock == .floor)
  }

  @Test func heldWallClockWithinToleranceStillExpiresByAge() throws {
    // A tolerance larger than the hold isolates the age rule judged from max(wall, L).
    let policy = try EligibilityPolicy(maxAge: day, clockTolerance: day * 3)
    var scenario = FloorScenario(policy: policy)
    scenario.boot.advance(by: day + .nanoseconds(1))
    let result = scenario.decide()
    #expect(result.markRule.status == .fresh)
    #expect(result.combined.reasons == .tooOld)
  }

  @Test func wallMovedBackAnHourButAheadOfTheMarkIsRefused() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 7))
    scenario.pass(day)
    #expect(scenario.decide().combined.status == .fresh)
    let mark = scenario.record.mark
    scenario.pass(.seconds(7200))
    scenario.wall.moveBack(by: .seconds(3600))
    #expect(scenario.wall.now() > mark)
    let result = scenario.decide()
    #expect(result.markRule.status == .fresh)
    #expect(result.combined.status == .expired)
    #expect(result.combined.reasons == .clockBehindElapsedTime)
    #expect(result.check.behindFloor == .seconds(3600))
    #expect(result.check.wall == scenario.wall.now())
    // Tolerance: 2 s + 500 ppm of 26 h = 2 s + 46.8 s.
    #expect(result.check.toleranceNanoseconds == 48_800_000_000)
  }

  @Test func rebootAddsTheNewUptimeToTheFloor() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day))
    scenario.pass(.seconds(3600))
    _ = scenario.decide()
    let before = scenario.record.floor.lowerBound
    #expect(before == FloorScenario.start.saturatingAdvanced(by: .seconds(3600)))
    scenario.boot.reboot(into: FloorScenario.bootB, uptime: .seconds(600))
    scenario.wall.advance(by: .seconds(1800))  // the device was off for 20 minutes too
    let result = scenario.decide()
    #expect(scenario.record.floor.lowerBound == before.saturatingAdvanced(by: .seconds(600)))
    #expect(scenario.record.floor.anchorBootID == FloorScenario.bootB)
    #expect(scenario.record.floor.elapsedSinceSignIn == .seconds(4200))
    #expect(result.combined.status == .fresh)
    #expect(result.check.effectiveClock == .wall)
  }

  @Test func refusedObservationLosesNoElapsedTime() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 7))
    scenario.boot.advance(by: day)
    #expect(scenario.decide().combined.reasons == .clockBehindElapsedTime)
    scenario.boot.advance(by: day)
    let second = scenario.decide()
    #expect(second.combined.reasons == .clockBehindElapsedTime)
    #expect(second.check.floor == FloorScenario.start.saturatingAdvanced(by: day * 2))
    #expect(second.check.behindFloor == day * 2)
    // A clock that admits only one of the two days is still refused; the true time passes.
    scenario.wall.set(FloorScenario.start.saturatingAdvanced(by: day + .seconds(3600)))
    #expect(scenario.decide().combined.reasons == .clockBehindElapsedTime)
    scenario.wall.set(FloorScenario.start.saturatingAdvanced(by: day * 2))
    #expect(scenario.decide().combined.status == .fresh)
  }

  @Test func slewOfFiveHundredthsOfAPercentOverADayIsNotRefused() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 7))
    scenario.boot.advance(by: day)
    scenario.wall.advance(by: .milliseconds(86_356_800))  // 0.05 % slow
    let result = scenario.decide()
    #expect(result.check.behindFloor == .milliseconds(43_200))
    #expect(result.check.toleranceNanoseconds == 45_200_000_000)
    #expect(result.combined.status == .fresh)
  }

  @Test func slewAtExactlyTheRateWithNoFixedPartIsNotRefused() throws {
    let policy = try EligibilityPolicy(maxAge: day * 7, clockTolerance: .zero)
    var scenario = FloorScenario(policy: policy)
    scenario.boot.advance(by: day)
    scenario.wall.advance(by: .milliseconds(86_356_800))
    #expect(scenario.decide().combined.status == .fresh)
  }

  @Test(arguments: [(behindExtra: Int64(0), refused: false), (behindExtra: 1, refused: true)])
  func toleranceBoundary(behindExtra: Int64, refused: Bool) throws {
    // Fixed 2 s; elapsed 1 day + 1 ns → rate part ⌈86_400_000_000_001 / 2000⌉ = 43_200_000_001.
    let expected: Int64 = 2_000_000_000 + 43_200_000_001
    #expect(
      BootClockFloorCheck.tolerance(
        fixed: .seconds(2), elapsedSinceSignIn: day + .nanoseconds(1)) == UInt64(expected))
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 7))
    scenario.boot.advance(by: day + .nanoseconds(1))
    let floor = FloorScenario.start.saturatingAdvanced(by: day + .nanoseconds(1))
    scenario.wall.set(floor.saturatingAdvanced(by: .nanoseconds(-(expected + behindExtra))))
    let result = scenario.decide()
    #expect(result.check.toleranceNanoseconds == UInt64(expected))
    #expect(result.combined.reasons.contains(.clockBehindElapsedTime) == refused)
    #expect(result.combined.status == (refused ? .expired : .fresh))
  }

  @Test(arguments: [-400, 400])
  func thirtyDaysOfDriftWithDailyObservationsAreNeverRefused(partsPerMillion: Int) throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 60))
    let wallDay = Duration.nanoseconds(86_400_000_000_000 + 86_400_000 * Int64(partsPerMillion))
    for dayNumber in 1...30 {
      scenario.boot.advance(by: day)
      scenario.wall.advance(by: wallDay)
      let result = scenario.decide()
      #expect(result.combined.status == .fresh, "day \(dayNumber): \(result.combined.reasons)")
    }
    let expectedBehind = partsPerMillion < 0 ? Duration.milliseconds(1_036_800) : .zero
    #expect(scenario.decide().check.behindFloor == expectedBehind)
  }

  @Test func bootClockBackwardOnTheSameBootIsRefusedUntilSignIn() throws {
    var scenario = FloorScenario(policy: try EligibilityPolicy(maxAge: day * 7))
    scenario.pass(.seconds(600))
    #expect(scenario.decide().combined.status == .fresh)
    scenario.boot.moveBack(by: .seconds(1))
    scenario.wall.advance(by: .seconds(1))
    let refused = scenario.decide()
    #expect(refused.combined.reasons == .bootClockInconsistent)
    #expect(refused.check.isFloorUntrusted)
    #expect(refused.check.effectiveClock == .wall)
    scenario.pass(.seconds(3600))  // moving forward again does not restore trust
    #expect(scenario.decide().combined.reasons == .bootClockInconsistent)
    scenario.record = .afterOnlineSignIn(
      generation: 2,
      at: ClockObservation(wall: scenario.wall.now(), boot: scenario.boot.now()))
    #expect(scenario.decide().combined.status == .fresh)
  }

  @Test func floorTurnedOffAddsNothingAndUsesTheWallClock() throws {
    let policy = try EligibilityPolicy(maxAge: day, usesBootClockFloor: false)
    var scenario = FloorScenario(policy: policy)
    scenario.boot.advance(by: day * 2)
    let result = scenario.decide()
    #expect(!result.check.isApplied)
    #expect(result.check.reasons.isEmpty)
    #expect(result.check.effectiveNow == scenario.wall.now())
    #expect(result.combined.status == .fresh)
  }

  @Test func seedReasonsAreKeptBesideTheFloorsAndUnavailableStays() throws {
    let policy = try EligibilityPolicy(maxAge: day)
    var scenario = FloorScenario(policy: policy)
    scenario.pass(.seconds(60))
    _ = scenario.decide()
    scenario.boot.advance(by: .seconds(60))
    scenario.wall.moveBack(by: .seconds(30))  // behind the mark by 30 s, the floor by 90 s
    let result = scenario.decide()
    #expect(result.combined.reasons == [.clockBehindMark, .clockBehindElapsedTime])
    let empty = policy.evaluate(.empty, now: scenario.wall.now(), mark: scenario.record.mark)
    #expect(result.check.applied(to: empty) == empty)
  }

  @Test func effectiveNowForTheReaderIsTheLaterClockUnlessUntrusted() {
    let wall = WallClockInstant(nanosecondsSinceEpoch: 1_000)
    var floor = BootClockFloor.signIn(
      at: WallClockInstant(nanosecondsSinceEpoch: 5_000),
      boot: BootClockReading(bootID: FloorScenario.bootA, sinceBoot: .zero))
    #expect(
      BootClockFloorCheck.effectiveNow(wall: wall, floor: floor).nanosecondsSinceEpoch == 5_000)
    #expect(BootClockFloorCheck.effectiveNow(wall: wall, floor: nil) == wall)
    floor.isUntrusted = true
    #expect(BootClockFloorCheck.effectiveNow(wall: wall, floor: floor) == wall)
  }

  @Test func toleranceSaturatesAndRoundsUp() {
    #expect(BootClockFloorCheck.tolerance(fixed: .zero, elapsedSinceSignIn: .nanoseconds(1)) == 1)
    #expect(
      BootClockFloorCheck.tolerance(fixed: .zero, elapsedSinceSignIn: .nanoseconds(2000)) == 1)
    #expect(
      BootClockFloorCheck.tolerance(fixed: .zero, elapsedSinceSignIn: .nanoseconds(2001)) == 2)
    #expect(
      BootClockFloorCheck.tolerance(fixed: .seconds(1), elapsedSinceSignIn: .zero - day)
        == 1_000_000_000)
    let huge = Duration.seconds(Int64.max)
    #expect(BootClockFloorCheck.tolerance(fixed: huge, elapsedSinceSignIn: huge) == .max)
    #expect(
      BootClockFloorCheck.tolerance(fixed: .nanoseconds(Int64.max), elapsedSinceSignIn: huge)
        == UInt64(Int64.max) + UInt64.max / 2000 + 1)
  }

  @Test func extremeInstantsNeverTrap() throws {
    let policy = try EligibilityPolicy(maxAge: .zero)
    let floor = BootClockFloor(
      lowerBound: .max, anchorBootID: FloorScenario.bootA, anchorSinceBoot: .zero,
      elapsedSinceSignIn: .zero, isUntrusted: false)
    let record = ClockMarkRecord(generation: 1, mark: .min, floor: floor)
    let items = ItemTimeSummary(writtenAt: [WallClockInstant.min])
    let check = BootClockFloorCheck(record: record, wall: .min, items: items, policy: policy)
    #expect(check.reasons == [.tooOld, .clockBehindElapsedTime])
    #expect(check.behindFloor == WallClockInstant.min.duration(to: .max))
  }
}
