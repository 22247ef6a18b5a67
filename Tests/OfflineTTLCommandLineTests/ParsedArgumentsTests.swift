import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct ParsedArgumentsTests {
  @Test func valuesAreInOrderAndAbsentOptionsAreNilOrEmpty() {
    let parsed = ParsedArguments(values: ["written-at": ["1", "2"]], flags: ["json"])
    #expect(parsed.values(.writtenAt) == ["1", "2"])
    #expect(parsed.values(.put) == [])
    #expect(parsed.value(.now) == nil)
    #expect(parsed.flag(.json))
    #expect(!parsed.flag(.keep))
  }

  @Test func requiredValueNamesTheMissingOption() {
    #expect(throws: UsageError("missing option '--now'")) {
      try ParsedArguments().requiredValue(.now)
    }
  }
}
