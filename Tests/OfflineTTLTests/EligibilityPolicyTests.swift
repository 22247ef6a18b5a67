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
