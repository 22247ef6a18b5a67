import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct ParsedArgumentsValuesTests {
  @Test(arguments: [
    ("s", Int64(1_500_000_000_000_000_000)), ("ms", 1_500_000_000_000_000), ("ns", 1_500_000_000),
  ])
  func instantsAreReadExactlyInTheUnit(symbol: String, nanoseconds: Int64) throws {
    let parsed = ParsedArguments(values: ["now": ["1500000000"], "unit": [symbol]])
    let unit = try parsed.unit()
    #expect(try parsed.instant(.now, unit: unit)?.nanosecondsSinceEpoch == nanoseconds)
  }

  @Test func defaultUnitIsSeconds() throws {
    #expect(try ParsedArguments().unit() == .seconds)
  }

  @Test func unknownUnitIsAUsageError() {
    #expect(throws: UsageError("--unit: 'min' is not a unit (use one of s, ms, ns)")) {
      try ParsedArguments(values: ["unit": ["min"]]).unit()
    }
  }

  @Test func anInstantBeyondInt64NanosecondsIsAUsageErrorNamingTheOption() throws {
    let parsed = ParsedArguments(values: ["now": ["9223372037"]])
    #expect(
      throws: UsageError(
        "--now: 9223372037s does not fit in Int64 nanoseconds since the epoch"
          + " (about years 1677 to 2262)")
    ) { try parsed.instant(.now, unit: .seconds) }
    // One second less fits.
    #expect(
      try ParsedArguments(values: ["now": ["9223372036"]]).instant(.now, unit: .seconds)
        == WallClockInstant(nanosecondsSinceEpoch: 9_223_372_036_000_000_000))
  }

  @Test func instantsReadEveryRepeatedValue() throws {
    let parsed = ParsedArguments(values: ["written-at": ["1", "-2"]])
    #expect(
      try parsed.instants(.writtenAt, unit: .milliseconds) == [
        WallClockInstant(nanosecondsSinceEpoch: 1_000_000),
        WallClockInstant(nanosecondsSinceEpoch: -2_000_000),
      ])
  }

  @Test func durationOrCountTakesCountsThatFitInInt64NanosecondsOrUnits() throws {
    let parsed = ParsedArguments(values: ["max-age": ["\(Int64.max)"]])
    #expect(try parsed.durationOrCount(.maxAge, unit: .nanoseconds) == .nanoseconds(Int64.max))
    #expect(throws: UsageError.self) { try parsed.durationOrCount(.maxAge, unit: .seconds) }
    let largest = ParsedArguments(values: ["max-age": ["9223372036"]])
    #expect(try largest.durationOrCount(.maxAge, unit: .seconds) == .seconds(9_223_372_036))
    let units = ParsedArguments(values: ["max-age": ["1h30m"]])
    #expect(try units.durationOrCount(.maxAge, unit: .nanoseconds) == .seconds(5400))
  }

  @Test func durationRejectsABareIntegerNamingTheOption() throws {
    let parsed = ParsedArguments(values: ["clock-tolerance": ["90"]])
    #expect(
      throws: UsageError(
        "--clock-tolerance: '90' has no unit; write it with a unit, e.g. 500ms, 90s, 15m, 12h, 7d or 1h30m"
      )
    ) { try parsed.duration(.clockTolerance) }
    #expect(
      try ParsedArguments(values: ["clock-tolerance": ["1h30m"]]).duration(.clockTolerance)
        == .seconds(5400))
  }
}
