import OfflineTTL
import Testing

@Suite struct TimeUnitTests {
  @Test func symbolsAndScales() {
    #expect(TimeUnit.allCases.map(\.symbol) == ["s", "ms", "ns"])
    #expect(TimeUnit.seconds.nanoseconds == 1_000 * TimeUnit.milliseconds.nanoseconds)
    #expect(TimeUnit.milliseconds.nanoseconds == 1_000_000 * TimeUnit.nanoseconds.nanoseconds)
  }

  @Test func durationsAgreeAcrossUnitsAndTakeAnyInt64() {
    #expect(TimeUnit.seconds.duration(1) == TimeUnit.milliseconds.duration(1000))
    #expect(TimeUnit.milliseconds.duration(1) == TimeUnit.nanoseconds.duration(1_000_000))
    #expect(TimeUnit.seconds.duration(.max).components.seconds == .max)
    #expect(TimeUnit.seconds.duration(.min).components.seconds == .min)
  }
}
