import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct BatchLineParserTests {
  func parse(_ text: String, unit: TimeUnit = .nanoseconds) -> Result<
    BatchLineParser.Case, BatchLineParser.Failure
  > {
    var text = text
    return text.withUTF8 { bytes in
      Result { () throws(BatchLineParser.Failure) in try BatchLineParser.parse(bytes, unit: unit) }
    }
  }

  func message(_ text: String, unit: TimeUnit = .nanoseconds) -> String? {
    guard case .failure(let failure) = parse(text, unit: unit) else { return nil }
    return failure.message
  }

  @Test func readsFieldsInAnyOrderWithSpacesAndSkipsOtherMembers() throws {
    let text =
      #" { "max_age" : 5 , "x":{"y":[1,-2.5e3,"a\"b",true,false,null,{}]}, "mark":null,"#
      + #" "now": -4 ,"written_at":[ 3, -9223372036854775808 ,9223372036854775807 ] } "#
    let parsed = try parse(text).get()
    #expect(parsed.items.count == 3)
    #expect(parsed.items.oldest == .min)
    #expect(parsed.items.newest == .max)
    #expect(parsed.now == WallClockInstant(nanosecondsSinceEpoch: -4))
    #expect(parsed.mark == nil)
    #expect(parsed.maxAge == .nanoseconds(5))
  }

  @Test func appliesTheUnitToEveryValue() throws {
    let parsed = try parse(
      #"{"written_at":[2],"now":3,"mark":4,"max_age":5}"#, unit: .seconds
    ).get()
    #expect(parsed.items.oldest == WallClockInstant(nanosecondsSinceEpoch: 2_000_000_000))
    #expect(parsed.now == WallClockInstant(nanosecondsSinceEpoch: 3_000_000_000))
    #expect(parsed.mark == WallClockInstant(nanosecondsSinceEpoch: 4_000_000_000))
    #expect(parsed.maxAge == .seconds(5))
  }

  @Test(arguments: [
    (#"{"now":1,"mark":null,"max_age":1}"#, #"missing field "written_at""#),
    (#"{"written_at":[],"mark":null,"max_age":1}"#, #"missing field "now""#),
    (#"{"written_at":[],"now":1,"max_age":1}"#, #"missing field "mark""#),
    (#"{"written_at":[],"now":1,"mark":1}"#, #"missing field "max_age""#),
    (#"{"written_at":[],"now":1,"now":1,"mark":1,"max_age":1}"#, #"field "now" given twice"#),
    (#"{"written_at":[1.0],"now":1,"mark":1,"max_age":1}"#, "written_at[0]: not an integer"),
    (#"{"written_at":[0,1e2],"now":1,"mark":1,"max_age":1}"#, "written_at[1]: not an integer"),
    (#"{"written_at":[],"now":"1","mark":1,"max_age":1}"#, "now: not an integer"),
    (#"{"written_at":[],"now":null,"mark":1,"max_age":1}"#, "now: must not be null"),
    (#"{"written_at":null,"now":1,"mark":1,"max_age":1}"#, "written_at: must not be null"),
    (#"{"written_at":5,"now":1,"mark":1,"max_age":1}"#, "written_at: not an array of integers"),
    (#"{"written_at":[],"now":1,"mark":true,"max_age":1}"#, "mark: not an integer"),
    (
      #"{"written_at":[],"now":9223372036854775808,"mark":1,"max_age":1}"#,
      "now: does not fit in a 64-bit integer"
    ),
    (
      #"{"written_at":[],"now":1,"mark":1,"max_age":-1}"#,
      "max_age: -1 is negative; a max age must be zero or more"
    ),
    ("", "not valid JSON (column 1)"),
    ("[]", "not valid JSON (column 1)"),
    (#"{"written_at":[01],"now":1,"mark":1,"max_age":1}"#, "not valid JSON (column 16)"),
    (#"{"written_at":[1,],"now":1,"mark":1,"max_age":1}"#, "not valid JSON (column 18)"),
    (#"{"written_at":[],"now":1,"mark":1,"max_age":1}x"#, "not valid JSON (column 47)"),
    (#"{"written_at":[],"now":1,"mark":1,"max_age":1"#, "not valid JSON (column 46)"),
    (#"{"x":tru,"written_at":[],"now":1,"mark":1,"max_age":1}"#, "not valid JSON (column 6)"),
  ])
  func rejectsWithAMessageNamingTheField(text: String, expected: String) {
    #expect(message(text) == expected)
  }

  @Test func outOfRangeForTheUnitNamesTheElement() {
    #expect(
      message(#"{"written_at":[0,-9223372037],"now":1,"mark":1,"max_age":1}"#, unit: .seconds)
        == "written_at[1]: -9223372037s does not fit in Int64 nanoseconds since the epoch"
        + " (about years 1677 to 2262)")
  }
}
