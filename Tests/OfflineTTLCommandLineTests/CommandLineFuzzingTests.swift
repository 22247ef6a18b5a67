import Foundation
import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

/// Every saved fuzz input of the command line's readers still keeps every promise, and each
/// crash the fuzzer found is pinned with the other members of its kind.
@Suite struct CommandLineFuzzingTests {
  static func corpus(_ target: String) -> [(name: String, bytes: [UInt8])] {
    let directory = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fuzz/Corpus/\(target)")
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.sorted() ?? []
    return names.compactMap { name in
      FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        .map { (name, Array($0)) }
    }
  }

  @Test(arguments: ["batch-line", "duration"])
  func everySavedInputKeepsEveryPromise(target: String) throws {
    let inputs = Self.corpus(target)
    try #require(inputs.count >= 3, "Fuzz/Corpus/\(target) has its starting inputs")
    for input in inputs {
      let problems =
        target == "duration"
        ? CommandLineFuzzing.duration(input.bytes) : CommandLineFuzzing.batchLine(input.bytes)
      #expect(problems == [], "\(target)/\(input.name)")
    }
  }

  func accepts(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer {
      (try? BatchLineParser.parse($0, unit: .seconds)) != nil
    }
  }

  func line(_ member: [UInt8]) -> [UInt8] {
    Array(#"{"written_at":[1],"now":2,"mark":null,"max_age":3,"x":"#.utf8) + member + [0x7D]
  }

  // Found by the batch-line target: a member the reader skips was checked loosely, so a line
  // that is not JSON (`"\u 0e9"`, an unknown escape) got a result instead of an error line.
  // The other members of the kind: every escape, surrogate, UTF-8 and number rule of RFC 8259.
  @Test(arguments: [
    #""\u 0e9""#, #""\x""#, #""\u00g0""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
    #""\"#, "1.", "01", "1e", "1e+", "--1", "1-2", ".5", "+1", "-", "1.2.3", "0x10", "1E5e5",
  ])
  func refusesAMemberThatIsNotJSON(member: String) {
    #expect(!accepts(line(Array(member.utf8))), "\(member)")
  }

  @Test(
    arguments: [
      [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
      [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0x80, 0x22],
    ] as [[UInt8]])
  func refusesAStringThatIsNotUTF8(member: [UInt8]) {
    #expect(!accepts(line(member)))
  }

  @Test(arguments: [
    #""\ud83d\ude00 \" \\ \/ \b \f \n \r \t \u00E9""#, "\"é 😀 \u{10FFFF}\"", "-0", "0",
    "-0.5e+10", "1E-5", "12.25", "[]", #"{"a\u0041":[1,{"b":null}]}"#,
  ])
  func stillAcceptsEveryJSONValue(member: String) {
    #expect(accepts(line(Array(member.utf8))), "\(member)")
  }

  @Test func aKeyWithAnUnknownEscapeIsNotJSONEither() {
    #expect(!accepts(Array(#"{"n\ow":2,"written_at":[1],"now":2,"mark":null,"max_age":3}"#.utf8)))
  }
}
