import OfflineTTL
import Testing

@Suite struct DurationNanosecondsTests {
  @Test func exactNanosecondsFitsInt64OrIsNil() {
    #expect(Duration.seconds(2).exactNanoseconds == 2_000_000_000)
    #expect(Duration.nanoseconds(Int64.min).exactNanoseconds == .min)
    #expect(Duration.nanoseconds(Int64.max).exactNanoseconds == .max)
    #expect((Duration.nanoseconds(Int64.max) + .nanoseconds(1)).exactNanoseconds == nil)
    #expect(Duration.seconds(-9_223_372_037).exactNanoseconds == nil)
  }

  @Test func saturatingNonnegativeNanosecondsClamps() {
    #expect(Duration.seconds(-1).saturatingNonnegativeNanoseconds == 0)
    #expect(Duration.zero.saturatingNonnegativeNanoseconds == 0)
    #expect(Duration.nanoseconds(Int64.max).saturatingNonnegativeNanoseconds == UInt64(Int64.max))
    #expect(
      (Duration.nanoseconds(Int64.max) * 2 + .nanoseconds(1)).saturatingNonnegativeNanoseconds
        == .max)
    #expect(Duration.seconds(Int64.max).saturatingNonnegativeNanoseconds == .max)
  }
}
