import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct ParsedArgumentsTests {
  @Test func valuesAreInOrderAndAbsentOptionsAreNilOrEmpty() {
    let parsed = ParsedArguments(values: ["a": ["1", "2"]], flags: ["f"])
    #expect(parsed.values("a") == ["1", "2"])
    #expect(parsed.values("b") == [])
    #expect(parsed.value("b") == nil)
    #expect(parsed.flag("f"))
    #expect(!parsed.flag("g"))
  }

  @Test func requiredValueNamesTheMissingOption() {
    #expect(throws: UsageError("missing option '--now'")) {
      try ParsedArguments().requiredValue("now")
    }
  }
}
