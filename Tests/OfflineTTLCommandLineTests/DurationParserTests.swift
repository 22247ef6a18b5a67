import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct DurationParserTests {
  @Test(arguments: [
    ("500ms", Duration.milliseconds(500)), ("90s", .seconds(90)), ("15m", .seconds(900)),
    ("12h", .seconds(43_200)), ("7d", .seconds(604_800)), ("1h30m", .seconds(5400)),
    ("1d2h3m4s5ms6us7ns", .nanoseconds(93_784_005_006_007)), ("0s", .zero),
    ("9223372036854775807ns", .nanoseconds(Int64.max)),
  ])
  func parses(text: String, duration: Duration) throws {
    #expect(try DurationParser.parse(text) == duration)
  }

  @Test(arguments: ["90", "0", "", "s", "1x", "1.5s", "-1s", "1h 30m", "30m1h", "1s1s", "1S"])
  func rejectsAsInvalidDuration(text: String) {
    #expect {
      try DurationParser.parse(text)
    } throws: { error in
      (error as? InvalidValueError)?.code == .invalidDuration
    }
  }

  @Test(arguments: [
    "9223372036854775808ns", "106752d", "99999999999999999999999s", "106751d23h47m16s854ms776us",
  ])
  func rejectsOverflowAsOutOfRange(text: String) {
    #expect {
      try DurationParser.parse(text)
    } throws: { error in
      (error as? InvalidValueError)?.code == .outOfRange
    }
  }

  @Test func largestFitsExactly() throws {
    #expect(try DurationParser.parse("106751d23h47m16s854ms775us807ns") == DurationParser.largest)
  }
}
