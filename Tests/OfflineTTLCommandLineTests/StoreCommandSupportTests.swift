import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct StoreCommandSupportTests {
  @Test(arguments: [
    (Duration.zero, "0s"), (.seconds(7 * 86_400), "7d"), (.seconds(5400), "1h30m"),
    (.milliseconds(500), "500ms"), (.nanoseconds(86_400_000_000_001), "1d1ns"),
    (.seconds(-86_400), "-1d"), (.nanoseconds(1), "1ns"), (.milliseconds(-1_500), "-1s500ms"),
    // Beyond Int64 nanoseconds: an instant of 1677 seen from 2026 (no "inf").
    (.nanoseconds(Int64.max) + .nanoseconds(Int64.max), "213503d23h34m33s709ms551us614ns"),
    (.zero - .nanoseconds(Int64.max) - .seconds(86_400), "-106752d23h47m16s854ms775us807ns"),
  ])
  func durationsAreWrittenWithUnitsLargestFirst(_ duration: Duration, _ text: String) throws {
    #expect(StoreCommandSupport.durationText(duration) == text)
    if duration >= .zero, duration.exactNanoseconds != nil {
      #expect(try DurationParser.parse(text) == duration, "round-trips through the parser")
    }
  }

  @Test func roundedDurationDropsTheFractionAboveOneSecond() {
    #expect(StoreCommandSupport.roundedDurationText(.milliseconds(90_500)) == "1m30s")
    #expect(StoreCommandSupport.roundedDurationText(.milliseconds(500)) == "500ms")
  }

  @Test func refusalNamesStatusReasonsAndTheStoreError() throws {
    let zero = WallClockInstant(nanosecondsSinceEpoch: 0)
    let reading = ClockObservation(wall: zero)
    let stored = ClockMarkRecord.afterOnlineSignIn(
      generation: 1, at: ClockObservation(wall: WallClockInstant(nanosecondsSinceEpoch: 10)))
    let mark = MarkOutcome.failed(
      ClockMarkStoreError(code: .writeFailed, errno: 28, reason: "ENOSPC"), stored: stored,
      reading)
    let items = try ItemTimeSummary(count: 1, oldest: zero, newest: zero)
    let policy = try EligibilityPolicy(maxAge: .seconds(60), usesBootClockFloor: false)
    let evaluation = OfflinePolicySet().evaluate(
      OfflineDecisionInputs(
        items: items, reading: reading, previousMark: mark.previousMark, record: mark.recordAfter),
      policy: policy)
    let decision = OfflineAccessDecision(evaluation: evaluation, mark: mark, items: .success(items))
    #expect(
      StoreCommandSupport.refusal(decision)
        == "expired: clock_behind_mark,mark_not_persisted (write_failed: ENOSPC)")
  }
}
