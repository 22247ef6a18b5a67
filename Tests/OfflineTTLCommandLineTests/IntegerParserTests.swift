import Testing

@testable import OfflineTTLCommandLine

@Suite struct IntegerParserTests {
  @Test(arguments: [
    ("0", Int64(0)), ("-0", 0), ("42", 42), ("-42", -42), ("007", 7),
    ("9223372036854775807", .max), ("-9223372036854775808", .min),
  ])
  func parsesExactly(text: String, value: Int64) {
    #expect(IntegerParser.parse(text) == .success(value))
  }

  @Test(arguments: ["9223372036854775808", "-9223372036854775809", "99999999999999999999999"])
  func reportsOutOfRange(text: String) {
    #expect(IntegerParser.parse(text) == .failure(.outOfRange))
  }

  @Test(arguments: ["", "-", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "1_000", "--1", "١"])
  func reportsNotAnInteger(text: String) {
    #expect(IntegerParser.parse(text) == .failure(.notAnInteger))
  }

  @Test func optionMessagesNameTheOptionAndTheValue() {
    #expect(throws: UsageError("--now: 'abc' is not an integer")) {
      try IntegerParser.int64("abc", option: "now")
    }
    #expect(
      throws: UsageError(
        "--now: '9223372036854775808' is out of range for a 64-bit integer"
          + " (-9223372036854775808 to 9223372036854775807)")
    ) { try IntegerParser.int64("9223372036854775808", option: "now") }
  }
}
