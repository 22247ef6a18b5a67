import Foundation
import OfflineTTL
import Testing

@Suite struct WallClockInstantRFC3339ParsingTests {
  @Test(arguments: [
    ("1970-01-01T00:00:00Z", Int64(0)),
    ("2026-11-30T04:28:15.123456789Z", 1_796_012_895_123_456_789),
    ("2026-11-30t05:28:15.123456789+01:00", 1_796_012_895_123_456_789),
    ("2026-11-29T23:58:15.123456789-04:30", 1_796_012_895_123_456_789),
    ("1969-12-31T23:59:59.999999999Z", -1),
    ("1969-12-31T23:59:59.9z", -100_000_000),
    ("2000-02-29T00:00:00Z", 951_782_400_000_000_000),
    ("1677-09-21T00:12:43.145224192Z", Int64.min),
    ("2262-04-11T23:47:16.854775807Z", Int64.max),
  ])
  func readsRFC3339(text: String, nanoseconds: Int64) throws {
    #expect(try WallClockInstant(rfc3339: text).nanosecondsSinceEpoch == nanoseconds)
  }

  // Found by the rfc3339 fuzz target (its own first seed and then a mutation): within a second of
  // either end of the range, the seconds were scaled to nanoseconds before the fraction was
  // added, which overflowed although the instant fits.
  @Test(arguments: [
    Int64.min, Int64.min + 1, -9_223_372_036_731_319_019, -9_223_372_036_000_000_000,
    -9_223_372_035_999_999_999, -1_000_000_001, -1, 0, 1, 9_223_372_036_731_319_026,
    9_223_372_036_000_000_000, Int64.max - 1, Int64.max,
  ])
  func everyFormattedInstantReadsBackAsItself(nanoseconds: Int64) throws {
    let instant = WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
    #expect(try WallClockInstant(rfc3339: instant.rfc3339) == instant)
  }

  @Test(arguments: [
    "", "2026-11-30", "2026-11-30T04:28:15", "2026-11-30T04:28:15.Z",
    "2026-11-30T04:28:15.1234567891Z",  // finer than a nanosecond
    "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-30T24:00:00Z",
    "2026-11-30T23:60:00Z", "2016-12-31T23:59:60Z",  // a leap second
    "2026-11-30T04:28:15+24:00", "2026-11-30T04:28:15+01:60", "2026-11-30T04:28:15+0100",
    "2026-11-30 04:28:15Z", "+2026-11-30T04:28:15Z", "2026-11-30T04:28:15Z ",
    "２０２６-11-30T04:28:15Z",  // full-width digits
  ])
  func refusesWhatIsNotAnRFC3339Timestamp(text: String) {
    do {
      _ = try WallClockInstant(rfc3339: text)
      Issue.record("\(text) was accepted")
    } catch {
      #expect(error.code == .invalidOption)
      #expect(error.reason.contains("RFC 3339"))
    }
  }

  @Test(arguments: [
    "1677-09-21T00:12:43.145224191Z", "2262-04-11T23:47:16.854775808Z", "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z", "2262-04-12T00:00:00+00:01",
  ])
  func refusesInstantsOutsideTheRange(text: String) {
    do {
      _ = try WallClockInstant(rfc3339: text)
      Issue.record("\(text) was accepted")
    } catch {
      #expect(error.code == .outOfRange)
    }
  }

  @Test func agreesWithFoundationOnWholeSecondsAcrossTheRange() throws {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    var seconds: Int64 = -9_200_000_000
    while seconds < 9_200_000_000 {
      let instant = try WallClockInstant(secondsSinceEpoch: seconds)
      #expect(try WallClockInstant(rfc3339: formatter.string(from: instant.date)) == instant)
      seconds += 97_003_001
    }
  }
}
