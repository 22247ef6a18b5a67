import Foundation
import OfflineTTL
import Testing

@Suite struct WallClockInstantTests {
  @Test func unitConstructorsAgree() throws {
    let fromSeconds = try WallClockInstant(secondsSinceEpoch: 1)
    #expect(fromSeconds == (try WallClockInstant(millisecondsSinceEpoch: 1000)))
    #expect(fromSeconds == WallClockInstant(nanosecondsSinceEpoch: 1_000_000_000))
    #expect(fromSeconds == (try WallClockInstant(1, .seconds)))
    #expect(fromSeconds == (try WallClockInstant(1000, .milliseconds)))
    #expect(fromSeconds == (try WallClockInstant(1_000_000_000, .nanoseconds)))
    #expect(fromSeconds == (try WallClockInstant(Date(timeIntervalSince1970: 1))))
  }

  @Test func constructorsRejectValuesBeyondInt64NanosecondsInsteadOfTrapping() throws {
    // 9,223,372,036 s fits; one more does not.
    #expect(
      try WallClockInstant(secondsSinceEpoch: 9_223_372_036).nanosecondsSinceEpoch
        == 9_223_372_036_000_000_000)
    for seconds in [Int64(9_223_372_037), -9_223_372_037, .max, .min] {
      #expect {
        try WallClockInstant(secondsSinceEpoch: seconds)
      } throws: { error in
        (error as? InvalidValueError)?.code == .outOfRange
      }
    }
    #expect(throws: InvalidValueError.self) {
      try WallClockInstant(millisecondsSinceEpoch: 9_223_372_036_855)
    }
    #expect(throws: InvalidValueError.self) {
      try WallClockInstant(Date(timeIntervalSince1970: .infinity))
    }
    #expect(throws: InvalidValueError.self) {
      try WallClockInstant(Date(timeIntervalSince1970: 1e10))
    }
  }

  @Test func countInAUnitFloorsSoItNeverLandsAfterTheInstant() {
    #expect(WallClockInstant(nanosecondsSinceEpoch: 1_999_999_999).count(in: .seconds) == 1)
    #expect(WallClockInstant(nanosecondsSinceEpoch: -1).count(in: .seconds) == -1)
    #expect(WallClockInstant(nanosecondsSinceEpoch: -1_000_000).count(in: .milliseconds) == -1)
    #expect(WallClockInstant.min.count(in: .nanoseconds) == .min)
    #expect(WallClockInstant.min.count(in: .seconds) == -9_223_372_037)
  }

  @Test func advancedReportsOverflowAndSaturatingAdvancedClamps() {
    let nearMax = WallClockInstant(nanosecondsSinceEpoch: .max - 1)
    #expect(nearMax.advanced(by: .nanoseconds(1)) == .max)
    #expect(nearMax.advanced(by: .nanoseconds(2)) == nil)
    #expect(nearMax.saturatingAdvanced(by: .seconds(1)) == .max)
    #expect(WallClockInstant.min.advanced(by: .nanoseconds(-1)) == nil)
    #expect(WallClockInstant.min.saturatingAdvanced(by: .seconds(-1)) == .min)
    #expect(WallClockInstant.min.advanced(by: .seconds(Int64.max)) == nil)
  }

  @Test func durationToIsExactAcrossTheWholeRange() {
    #expect(
      WallClockInstant.min.duration(to: .max) == .nanoseconds(Int64.max) * 2 + .nanoseconds(1))
    #expect(
      WallClockInstant.max.duration(to: .min) == .zero
        - (.nanoseconds(Int64.max) * 2 + .nanoseconds(1)))
    #expect(
      WallClockInstant(nanosecondsSinceEpoch: 5).duration(to: .init(nanosecondsSinceEpoch: 2))
        == .nanoseconds(-3))
  }

  @Test func dateRoundTripsWithinAMicrosecondToday() throws {
    let instant = WallClockInstant(nanosecondsSinceEpoch: 1_796_012_895_123_456_789)
    let back = try WallClockInstant(instant.date)
    #expect(abs(back.nanosecondsSinceEpoch - instant.nanosecondsSinceEpoch) < 1000)
  }

  @Test func orderAndDescription() {
    #expect(WallClockInstant.min < .max)
    #expect(WallClockInstant(nanosecondsSinceEpoch: -5).description == "-5ns")
  }
}
