import Testing

@testable import OfflineTTLCommandLine

@Suite struct ArgumentReaderTests {
  static let configuration = CommandConfiguration(
    name: "demo-test", abstract: "A test command.",
    usage: ["demo-test [options] <key> [<more> ...]"],
    options: [
      .option("item", value: "t", repeatable: true, help: "An item."),
      .option("now", value: "t", help: "Now."),
      .flag("json", help: "JSON."),
    ],
    positionals: [
      PositionalSpec(name: "key", help: "A key."),
      PositionalSpec(name: "more", isOptional: true, isRepeatable: true, help: "More."),
    ])

  func read(_ arguments: [String]) throws(UsageError) -> ArgumentReader.Outcome {
    try ArgumentReader.read(arguments, for: Self.configuration)
  }

  @Test func readsBothValueFormsRepeatsFlagsAndPositionals() throws {
    let outcome = try read(["k", "--item", "1", "--item=2", "--now=-5", "--json", "x", "-"])
    let expected = ParsedArguments(
      values: ["item": ["1", "2"], "now": ["-5"]], flags: ["json"], positionals: ["k", "x", "-"])
    #expect(outcome == .arguments(expected))
  }

  @Test func aValueMayStartWithADashWhenSeparate() throws {
    guard case .arguments(let parsed) = try read(["--now", "-100", "k"]) else {
      Issue.record("expected arguments")
      return
    }
    #expect(parsed.value(.now) == "-100")
    #expect(parsed.positionals == ["k"])
  }

  @Test func doubleDashMakesTheRestPositional() throws {
    guard case .arguments(let parsed) = try read(["--", "--json", "-h"]) else {
      Issue.record("expected arguments")
      return
    }
    #expect(parsed.positionals == ["--json", "-h"])
    #expect(!parsed.flag(.json))
  }

  @Test(arguments: [["--help"], ["-h"], ["k", "--bogus", "--help"], ["--now", "1", "-h"]])
  func helpWinsAnywhereBeforeDoubleDash(arguments: [String]) throws {
    #expect(try read(arguments) == .help)
  }

  @Test(arguments: [
    (["k", "--bogus"], "unknown option '--bogus'"),
    (["k", "--bogus=1"], "unknown option '--bogus'"),
    (["k", "-x"], "unknown option '-x'"),
    (["k", "--now"], "option '--now' needs a value"),
    (["k", "--json=yes"], "option '--json' takes no value"),
    (["k", "--json", "--json"], "option '--json' was given twice"),
    (["k", "--now", "1", "--now=2"], "option '--now' was given more than once"),
    ([], "missing argument <key>"),
  ])
  func rejectsWithAUsageError(arguments: [String], message: String) {
    #expect(throws: UsageError(message)) { try read(arguments) }
  }

  @Test func rejectsAnExtraPositionalWhenNoneIsRepeatable() {
    let configuration = CommandConfiguration(
      name: "x", abstract: "x", usage: ["x"], options: [])
    #expect(throws: UsageError("unexpected argument 'extra'")) {
      try ArgumentReader.read(["extra"], for: configuration)
    }
  }
}
