import OfflineTTL
import Testing

@Suite struct EligibilityPolicyTests {
  @Test func seedWorkedExampleRefusesTwiceAndKeepsTheHigherMark() throws {
    let policy = try EligibilityPolicy(maxAge: .nanoseconds(1000))
    let w = [WallClockInstant(nanosecondsSinceEpoch: 100)]
    let now = WallClockInstant(nanosecondsSinceEpoch: 190)
    let first = policy.evaluate(
      writtenAt: w, now: now, mark: WallClockInstant(nanosecondsSinceEpoch: 200))
    #expect(first.status == .expired)
    #expect(first.updatedMark == WallClockInstant(nanosecondsSinceEpoch: 200))
    let second = policy.evaluate(writtenAt: w, now: now, mark: first.updatedMark)
    #expect(second.status == .expired)
    #expect(second.reasons == .clockBehindMark)
    #expect(second.updatedMark == WallClockInstant(nanosecondsSinceEpoch: 200))
  }
}

/// The policy cases: the eligibility rule and typed time (no trap, no wrap).
@Suite struct EligibilityPolicyRuleTests {
  func at(_ nanoseconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
  }

  func policy(_ maxAge: Int64) throws -> EligibilityPolicy {
    try EligibilityPolicy(maxAge: .nanoseconds(maxAge))
  }

  @Test func ageEqualToMaxAgeIsFreshAndOneUnitMoreIsExpired() throws {
    let policy = try policy(1000)
    let boundary = policy.evaluate(writtenAt: [at(100)], now: at(1100), mark: at(1100))
    #expect(boundary.status == .fresh)
    #expect(boundary.reasons == [])
    #expect(boundary.deadline == at(1100))
    #expect(boundary.age == .nanoseconds(1000))
    let past = policy.evaluate(writtenAt: [at(100)], now: at(1101), mark: at(1100))
    #expect(past.status == .expired)
    #expect(past.reasons == .tooOld)
    #expect(past.deadline == nil)
    #expect(past.updatedMark == at(1101))
  }

  @Test func ageIsJudgedByTheOldestItem() throws {
    let result = try policy(1000).evaluate(
      writtenAt: [at(900), at(50), at(1000)], now: at(1100), mark: nil)
    #expect(result.reasons == .tooOld)
    #expect(result.items.oldest == at(50))
    #expect(result.items.newest == at(1000))
    #expect(result.items.count == 3)
  }

  @Test func aFutureNewestItemIsRefusedWhileTheOldestIsWithinMaxAge() throws {
    let result = try policy(1000).evaluate(
      writtenAt: [at(1500), at(2001)], now: at(2000), mark: at(2000))
    #expect(result.status == .expired)
    #expect(result.reasons == .itemFromFuture)
    #expect(result.updatedMark == at(2000))
    // newest == now is not from the future.
    let equal = try policy(1000).evaluate(
      writtenAt: [at(1500), at(2000)], now: at(2000), mark: at(2000))
    #expect(equal.status == .fresh)
  }

  @Test func repeatedRollbackIsRefusedEveryTimeWithoutLoweringTheMark() throws {
    let policy = try policy(10_000)
    var mark: WallClockInstant? = at(5000)
    for now in [4999, 3000, 4999, 1] as [Int64] {
      let result = policy.evaluate(writtenAt: [at(0)], now: at(now), mark: mark)
      #expect(result.status == .expired)
      #expect(result.reasons == .clockBehindMark)
      #expect(result.previousMark == at(5000))
      #expect(result.updatedMark == at(5000))
      mark = result.updatedMark
    }
    // The clock back at the mark is fresh again, and moving on raises the mark.
    #expect(policy.evaluate(writtenAt: [at(0)], now: at(5000), mark: mark).status == .fresh)
    #expect(policy.evaluate(writtenAt: [at(0)], now: at(5001), mark: mark).updatedMark == at(5001))
  }

  @Test func firstUseTakesNowAsTheMark() throws {
    let result = try policy(100).evaluate(writtenAt: [at(10)], now: at(50), mark: nil)
    #expect(result.status == .fresh)
    #expect(result.previousMark == nil)
    #expect(result.updatedMark == at(50))
  }

  @Test func noItemsIsUnavailableAndLeavesTheMarkAlone() throws {
    let policy = try policy(100)
    let withMark = policy.evaluate(writtenAt: [], now: at(50), mark: at(70))
    #expect(withMark.status == .unavailable)
    #expect(withMark.reasons == [])
    #expect(withMark.updatedMark == at(70))
    #expect(withMark.deadline == nil)
    #expect(withMark.age == nil)
    let firstUse = policy.evaluate(writtenAt: [], now: at(50), mark: nil)
    #expect(firstUse.status == .unavailable)
    #expect(firstUse.updatedMark == nil)
  }

  @Test func everyReasonIsReportedTogether() throws {
    let result = try policy(10).evaluate(writtenAt: [at(0), at(300)], now: at(200), mark: at(250))
    #expect(result.reasons == [.clockBehindMark, .itemFromFuture, .tooOld])
    #expect(result.reasons.codes == ["clock_behind_mark", "item_from_future", "too_old"])
  }

  @Test(arguments: [Int64.min, -1, 0, 1, Int64.max])
  func extremesNeverTrap(maxAgeNanoseconds: Int64) throws {
    guard maxAgeNanoseconds >= 0 else { return }
    let policy = try policy(maxAgeNanoseconds)
    for item in [Int64.min, 0, Int64.max] {
      for now in [Int64.min, 0, Int64.max] {
        for mark in [nil, Int64.min, 0, Int64.max] as [Int64?] {
          let result = policy.evaluate(writtenAt: [at(item)], now: at(now), mark: mark.map(at))
          let previous = mark ?? now
          let fresh =
            now >= previous && item <= now
            && (now < item || UInt64(bitPattern: now &- item) <= UInt64(maxAgeNanoseconds))
          #expect(result.status == (fresh ? .fresh : .expired))
          #expect(result.updatedMark == at(max(previous, now)))
        }
      }
    }
  }

  @Test func theWidestAgeAgainstTheLargestMaxAge() throws {
    // now − oldest = 2^64 − 1 ns: beyond Int64, within a Duration max age.
    let largest = Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999)
    let huge = try EligibilityPolicy(maxAge: largest)
    let wide = huge.evaluate(writtenAt: [.min], now: .max, mark: .max)
    #expect(wide.status == .fresh)
    #expect(wide.deadline == nil)  // .min + max age is past .max
    #expect(wide.age == .nanoseconds(Int64.max) * 2 + .nanoseconds(1))
    let exact = try EligibilityPolicy(maxAge: .nanoseconds(Int64.max) * 2)  // 2^64 − 2 ns
    #expect(exact.evaluate(writtenAt: [.min], now: .max, mark: nil).reasons == .tooOld)
    let enough = try EligibilityPolicy(maxAge: .nanoseconds(Int64.max) * 2 + .nanoseconds(1))
    #expect(enough.evaluate(writtenAt: [.min], now: .max, mark: nil).status == .fresh)
    // 2^64 − 1 ns after .min is exactly .max; one more nanosecond of max age is past it.
    #expect(enough.deadline(oldest: .min) == .max)
    let past = try EligibilityPolicy(maxAge: .nanoseconds(Int64.max) * 2 + .nanoseconds(2))
    #expect(past.maxAgeNanoseconds == .max)
    #expect(past.deadline(oldest: .min) == nil)
    #expect(enough.maxAgeNanoseconds == .max)
  }

  @Test func theDeadlineIsOldestPlusMaxAgeWhenRepresentable() throws {
    let policy = try policy(10)
    #expect(policy.deadline(oldest: at(Int64.max - 10)) == .max)
    #expect(policy.deadline(oldest: at(Int64.max - 9)) == nil)
    #expect(policy.deadline(oldest: .min) == at(Int64.min + 10))
  }

  @Test func aNegativeMaxAgeIsRejectedAtConstruction() {
    #expect {
      try EligibilityPolicy(maxAge: .nanoseconds(-1))
    } throws: { error in
      (error as? InvalidValueError)?.code == .negativeMaxAge
    }
    #expect(throws: InvalidValueError.self) {
      try EligibilityPolicy(maxAge: .seconds(1), clockTolerance: .seconds(-1))
    }
    #expect(throws: InvalidValueError.self) {
      try EligibilityPolicy(maxAge: .seconds(1), markResolution: .nanoseconds(-1))
    }
  }

  @Test func aZeroMaxAgeIsFreshOnlyAtTheWriteInstant() throws {
    let policy = try policy(0)
    #expect(policy.evaluate(writtenAt: [at(7)], now: at(7), mark: nil).status == .fresh)
    #expect(policy.evaluate(writtenAt: [at(7)], now: at(8), mark: nil).reasons == .tooOld)
  }

  @Test func aSubNanosecondMaxAgeDecidesLikeItsWholeNanoseconds() throws {
    let policy = try EligibilityPolicy(
      maxAge: .nanoseconds(1) + .init(secondsComponent: 0, attosecondsComponent: 500_000_000))
    #expect(policy.evaluate(writtenAt: [at(0)], now: at(1), mark: nil).status == .fresh)
    #expect(policy.evaluate(writtenAt: [at(0)], now: at(2), mark: nil).reasons == .tooOld)
  }

  @Test func defaultsMatchTheDesign() throws {
    let policy = try policy(1)
    #expect(!policy.trustOnFirstUse)
    #expect(policy.usesBootClockFloor)
    #expect(policy.clockTolerance == .seconds(2))
    #expect(policy.markResolution == .seconds(1))
  }
}
