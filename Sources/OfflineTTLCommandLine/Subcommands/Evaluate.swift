import OfflineTTL

/// `offline-ttl evaluate`: the pure policy as a what-if calculator, one case from options or
/// many as JSON Lines on standard input (`--batch`), the harness for differential testing.
enum Evaluate: Subcommand {
  static let configuration = CommandConfiguration(
    name: "evaluate",
    abstract: "Applies the eligibility rule to given times, without touching any store.",
    usage: [
      "evaluate [--written-at <t> ...] --now <t> [--mark <t>] --max-age <n> [options]",
      "evaluate --batch [--unit s|ms|ns]",
    ],
    options: [
      .option(
        "written-at", value: "t", repeatable: true,
        help: "When an item was written; give one per item (none: nothing is cached)."),
      .option("now", value: "t", help: "The wall-clock time of the decision."),
      .option("mark", value: "t", help: "The stored clock mark; leave out for first use."),
      .option("max-age", value: "n", help: "How long after its oldest item a cache may be used."),
      .option(
        "unit", value: "unit",
        help: "The unit of every time and duration: s (default), ms or ns."),
      .flag("json", help: "Prints one JSON object, the same as one line of --batch output."),
      .flag(
        "batch",
        help: "Reads one JSON case per line from standard input and writes one result per line."),
    ],
    discussion: """
      Times are integer counts of the unit since the Unix epoch. The result is fresh when the
      clock is not behind the mark, no item is dated after now, and now - oldest <= max age;
      the mark becomes max(mark, now). Exit status: 0 fresh, 1 expired, 2 unavailable (no
      items), 64 usage error; with --batch, 0 when every line was valid and 65 otherwise;
      74 standard input could not be read or standard output not written.

      --batch input, one case a line (blank lines are skipped):
        {"written_at":[100],"now":190,"mark":200,"max_age":1000}
      output, one line per case in order (or {"error":"..."} for a malformed line):
        {"status":"expired","mark":200,"reasons":["clock_behind_mark"]}
      """)

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let unit = try arguments.unit()
    if arguments.flag("batch") {
      for name in ["written-at", "now", "mark", "max-age"] where arguments.value(name) != nil {
        throw UsageError("--\(name) cannot be combined with --batch (cases come from stdin)")
      }
      return try EvaluateBatch.run(unit: unit, context: context)
    }
    let writtenAt = try arguments.instants("written-at", unit: unit)
    guard let now = try arguments.instant("now", unit: unit) else {
      throw UsageError("missing option '--now'")
    }
    let mark = try arguments.instant("mark", unit: unit)
    guard let maxAgeCount = try arguments.int64("max-age") else {
      throw UsageError("missing option '--max-age'")
    }
    guard maxAgeCount >= 0 else {
      throw UsageError("--max-age: \(maxAgeCount) is negative; a max age must be zero or more")
    }
    let policy = try EligibilityPolicy(maxAge: unit.duration(maxAgeCount))
    let evaluation = policy.evaluate(writtenAt: writtenAt, now: now, mark: mark)
    if arguments.flag("json") {
      var line = resultLine(evaluation, unit: unit)
      line.append(UInt8(ascii: "\n"))
      context.standardOutput.write(bytes: line)
    } else {
      context.standardOutput.write(text(evaluation, unit: unit))
    }
    return ExitCode(evaluation.status)
  }

  /// One `--batch` output line without its newline:
  /// `{"status":"...","mark":N|null,"reasons":[...]}`, the mark as a count of `unit`.
  static func resultLine(_ evaluation: EligibilityEvaluation, unit: TimeUnit) -> [UInt8] {
    var bytes: [UInt8] = []
    appendResultLine(evaluation, unit: unit, to: &bytes)
    return bytes
  }

  /// Appends ``resultLine(_:unit:)``'s bytes; allocates nothing once `bytes` has capacity.
  /// The mark is exact in `unit`: it is one of the inputs (`max(mark ?? now, now)`).
  static func appendResultLine(
    _ evaluation: EligibilityEvaluation, unit: TimeUnit, to bytes: inout [UInt8]
  ) {
    bytes.append(contentsOf: #"{"status":""#.utf8)
    switch evaluation.status {
    case .fresh: bytes.append(contentsOf: "fresh".utf8)
    case .expired: bytes.append(contentsOf: "expired".utf8)
    case .unavailable: bytes.append(contentsOf: "unavailable".utf8)
    }
    bytes.append(contentsOf: #"","mark":"#.utf8)
    if let mark = evaluation.updatedMark {
      appendDecimal(mark.count(in: unit), to: &bytes)
    } else {
      bytes.append(contentsOf: "null".utf8)
    }
    bytes.append(contentsOf: #","reasons":["#.utf8)
    var first = true
    let reasons = evaluation.reasons
    for index in reasonBits.indices where reasons.contains(reasonBits[index]) {
      if !first { bytes.append(UInt8(ascii: ",")) }
      first = false
      bytes.append(contentsOf: quotedReasonCodes[index])
    }
    bytes.append(contentsOf: "]}".utf8)
  }

  /// Every reason in listing order, and its code as a JSON string (computed once: the batch
  /// path writes them per line).
  static let reasonBits: [EligibilityReasons] = EligibilityReasons.allCases.map(\.reason)
  static let quotedReasonCodes: [[UInt8]] = EligibilityReasons.allCases.map { entry in
    var bytes: [UInt8] = []
    JSONValue.writeString(entry.code, to: &bytes)
    return bytes
  }

  /// Appends `value` in decimal without allocating.
  static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    let start = bytes.count
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
      magnitude /= 10
    } while magnitude > 0
    bytes[start...].reverse()
  }

  /// The human-readable result: `status:`, `mark:`, `reasons:` and, when fresh, `deadline:`.
  static func text(_ evaluation: EligibilityEvaluation, unit: TimeUnit) -> String {
    var lines = ["status: \(evaluation.status)"]
    lines.append("mark: " + (evaluation.updatedMark.map { "\($0.count(in: unit))" } ?? "none"))
    let reasons = evaluation.reasons.codes
    lines.append("reasons: " + (reasons.isEmpty ? "none" : reasons.joined(separator: ",")))
    if evaluation.status == .fresh {
      lines.append(
        "deadline: "
          + (evaluation.deadline.map { "\($0.count(in: unit))" } ?? "none (not representable)"))
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
