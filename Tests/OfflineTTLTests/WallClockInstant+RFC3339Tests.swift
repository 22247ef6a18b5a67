import Foundation
import OfflineTTL
import Testing

@Suite struct WallClockInstantRFC3339Tests {
  @Test(arguments: [
    (Int64(0), "1970-01-01T00:00:00.000000000Z"),
    (1_796_012_895_123_456_789, "2026-11-30T04:28:15.123456789Z"),
    (-1, "1969-12-31T23:59:59.999999999Z"),
    (951_782_400_000_000_000, "2000-02-29T00:00:00.000000000Z"),
    (4_107_542_399_000_000_000, "2100-02-28T23:59:59.000000000Z"),
    (4_107_542_400_000_000_000, "2100-03-01T00:00:00.000000000Z"),
    (Int64.min, "1677-09-21T00:12:43.145224192Z"),
    (Int64.max, "2262-04-11T23:47:16.854775807Z"),
  ])
  func formatsUTCWithNineFractionalDigits(nanoseconds: Int64, text: String) {
    #expect(WallClockInstant(nanosecondsSinceEpoch: nanoseconds).rfc3339 == text)
  }

  @Test func agreesWithFoundationOnWholeSecondsAcrossTheRange() throws {
    // Every 97,003,001 seconds from 1678 to 2261 (a stride that hits many month and leap
    // boundaries); Foundation's ISO 8601 formatter is the independent reference.
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    var seconds: Int64 = -9_200_000_000
    while seconds < 9_200_000_000 {
      let instant = try WallClockInstant(secondsSinceEpoch: seconds)
      let expected = formatter.string(from: instant.date)
        .replacingOccurrences(of: "Z", with: ".000000000Z")
      #expect(instant.rfc3339 == expected)
      seconds += 97_003_001
    }
  }
}
