import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct EvaluateTests {
  @Test func seedExampleIsExpiredWithTheHigherMarkAndExitsOne() {
    let run = runCommand(
      ["evaluate", "--written-at", "100", "--now", "190", "--mark", "200", "--max-age", "1000"])
    #expect(run.exitCode == .expired)
    #expect(run.standardOutput == "status: expired\nmark: 200\nreasons: clock_behind_mark\n")
    #expect(run.standardError == "")
  }

  @Test func freshPrintsTheDeadlineAndExitsZero() {
    let run = runCommand(
      ["evaluate", "--written-at=100", "--written-at=150", "--now=1100", "--max-age=1000"])
    #expect(run.exitCode == .fresh)
    #expect(run.standardOutput == "status: fresh\nmark: 1100\nreasons: none\ndeadline: 1100\n")
  }

  @Test func noItemsIsUnavailableExitTwoWithTheMarkUnchanged() {
    let run = runCommand(["evaluate", "--now", "5", "--mark", "9", "--max-age", "1", "--json"])
    #expect(run.exitCode == .unavailable)
    #expect(run.standardOutput == #"{"status":"unavailable","mark":9,"reasons":[]}"# + "\n")
  }

  @Test func jsonIsTheBatchLineAndListsEveryReasonInOrder() {
    let run = runCommand([
      "evaluate", "--written-at", "0", "--written-at", "300", "--now", "200", "--mark", "250",
      "--max-age", "100", "--json", "--unit", "ms",
    ])
    #expect(run.exitCode == .expired)
    #expect(
      run.standardOutput
        == #"{"status":"expired","mark":250,"reasons":["clock_behind_mark","item_from_future","too_old"]}"#
        + "\n")
  }

  @Test func unitsScaleEveryValueAlike() {
    // 1 s after the item with max age 1000 ms: fresh at the boundary, in every unit.
    for (unit, now, maxAge) in [
      ("s", "2", "1"), ("ms", "2000", "1000"), ("ns", "2000000000", "1000000000"),
    ] {
      let written = unit == "s" ? "1" : unit == "ms" ? "1000" : "1000000000"
      let run = runCommand([
        "evaluate", "--unit", unit, "--written-at", written, "--now", now, "--max-age", maxAge,
        "--json",
      ])
      #expect(run.exitCode == .fresh, "\(unit)")
      #expect(run.standardOutput == #"{"status":"fresh","mark":\#(now),"reasons":[]}"# + "\n")
    }
  }

  @Test(arguments: [
    (["evaluate", "--written-at", "1", "--max-age", "1"], "missing option '--now'"),
    (["evaluate", "--now", "1"], "missing option '--max-age'"),
    (
      ["evaluate", "--now", "1", "--max-age", "-1"],
      "--max-age: -1 is negative; a max age must be zero or more"
    ),
    (["evaluate", "--now", "x", "--max-age", "1"], "--now: 'x' is not an integer"),
    (
      ["evaluate", "--now", "9223372037", "--max-age", "1"],
      "--now: 9223372037s does not fit in Int64 nanoseconds since the epoch (about years 1677 to 2262)"
    ),
    // A bare count of the unit beyond Int64 nanoseconds, in each unit.
    (
      ["evaluate", "--now", "1", "--max-age", "9223372037"],
      "--max-age: 9223372037s does not fit in Int64 nanoseconds (the largest max age is"
        + " 9223372036s, about 292 years)"
    ),
    (
      ["evaluate", "--now", "1", "--max-age", "9223372036855", "--unit", "ms"],
      "--max-age: 9223372036855ms does not fit in Int64 nanoseconds (the largest max age is"
        + " 9223372036854ms, about 292 years)"
    ),
    (
      ["evaluate", "--now", "1", "--max-age", "9223372036854775807"],
      "--max-age: 9223372036854775807s does not fit in Int64 nanoseconds (the largest max age is"
        + " 9223372036s, about 292 years)"
    ),
    (
      ["evaluate", "--now", "1", "--max-age", "1", "--unit", "h"],
      "--unit: 'h' is not a unit (use one of s, ms, ns)"
    ),
    (
      ["evaluate", "--batch", "--now", "1"],
      "--now cannot be combined with --batch (cases come from stdin)"
    ),
    (["evaluate", "--now", "1", "--max-age", "1", "extra"], "unexpected argument 'extra'"),
  ])
  func usageErrorsExit64WithUsageOnStandardError(arguments: [String], message: String) {
    let run = runCommand(arguments)
    #expect(run.exitCode == .usage)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError
        == "error: \(message)\n" + HelpFormatter.usageHint(for: Evaluate.configuration))
  }

  @Test func extremesNeverTrap() {
    let run = runCommand([
      "evaluate", "--unit", "ns", "--written-at", "\(Int64.min)", "--now", "\(Int64.max)",
      "--mark", "\(Int64.min)", "--max-age", "\(Int64.max)", "--json",
    ])
    // Age is 2^64 - 1 ns > Int64.max ns.
    #expect(
      run.standardOutput
        == #"{"status":"expired","mark":9223372036854775807,"reasons":["too_old"]}"# + "\n")
  }

  @Test func appendDecimalWritesEveryInt64() {
    for value in [Int64.min, -1, 0, 7, 10, Int64.max] {
      var bytes: [UInt8] = []
      Evaluate.appendDecimal(value, to: &bytes)
      #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
  }
}

extension EvaluateTests {
  @Test(arguments: [("1000", "s"), ("1000s", "s"), ("16m40s", "ms"), ("1000000ms", "ns")])
  func maxAgeTakesUnitsOrABareCountOfTheUnit(maxAge: String, unit: String) {
    let scale = ["s": 1, "ms": 1000, "ns": 1_000_000_000][unit]!
    let run = runCommand([
      "evaluate", "--unit", unit, "--written-at", "\(100 * scale)", "--now", "\(1100 * scale)",
      "--max-age", maxAge, "--json",
    ])
    #expect(run.exitCode == .fresh, "\(maxAge) \(unit)")
    let late = runCommand([
      "evaluate", "--unit", unit, "--written-at", "\(100 * scale)", "--now", "\(1101 * scale)",
      "--max-age", maxAge,
    ])
    #expect(late.exitCode == .expired, "\(maxAge) \(unit)")
  }
}
