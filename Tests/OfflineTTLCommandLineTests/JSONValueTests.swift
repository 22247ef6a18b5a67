import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct JSONValueTests {
  @Test func objectsKeepInsertionOrderAndIntegersAreExact() {
    var object = JSONObject()
    object["zeta"] = .integer(.min)
    object["alpha"] = .unsignedInteger(.max)
    object["mid"] = .array([.null, .bool(true), .bool(false), .string("x")])
    object["zeta"] = .integer(.max)  // replaced in place, not moved
    #expect(
      object.text
        == #"{"zeta":9223372036854775807,"alpha":18446744073709551615,"mid":[null,true,false,"x"]}"#
    )
  }

  @Test func settingNilRemovesAKey() {
    var object = JSONObject(["a": .integer(1), "b": .integer(2)])
    object["a"] = nil
    #expect(object.text == #"{"b":2}"#)
  }

  @Test func stringsAreEscapedPerRFC8259() {
    let value = JSONValue.string("q\"b\\n\nt\tr\rb\u{8}f\u{C}nul\u{0}e\u{1F}é✓")
    #expect(value.text == #""q\"b\\n\nt\tr\rb\bf\fnul\u0000e\u001fé✓""#)
  }

  @Test func instantsAppearAsRFC3339AndNanoseconds() {
    var object = JSONObject()
    object.instant("mark", WallClockInstant(nanosecondsSinceEpoch: 1_796_012_895_123_456_789))
    object.instant("deadline", nil)
    #expect(
      object.text
        == #"{"mark":"2026-11-30T04:28:15.123456789Z","mark_ns":1796012895123456789,"#
        + #""deadline":null,"deadline_ns":null}"#)
  }

  @Test func emptyContainers() {
    #expect(JSONValue.array([]).text == "[]")
    #expect(JSONObject().text == "{}")
  }
}
