import OfflineTTL

/// `offline-ttl evaluate`: the pure policy as a what-if calculator, one case from options or
/// many as JSON Lines on standard input (`--batch`), the harness for differential testing.
enum Evaluate: Subcommand {
  static let configuration = CommandConfiguration(
    name: "evaluate",
    abstract: "Applies the eligibility rule to given times, without touching any store.",
    usage: [
      "evaluate [--written-at <t> ...] --now <t> [--mark <t>] --max-age <duration|n> [options]",
      "evaluate --batch [--unit s|ms|ns]",
    ],
    options: [
      .writtenAt, .now.with(help: "The wall-clock time of the decision."), .mark,
      .maxAge.with(
        help: "How long after its oldest item a cache may be used: with units (7d, 90s) or a"
          + " bare integer count of --unit."
      ).checked { text throws(UsageError) in
        try ParsedArguments.checkDurationOrCount(text, option: "max-age")
      },
      .unit, .json.with(help: "Prints one JSON object, the same as one line of --batch output."),
      .batch,
    ],
    discussion: """
      Times are integer counts of the unit since the Unix epoch. The result is fresh when the
      clock is not behind the mark, no item is dated after now, and now - oldest <= max age;
      the mark becomes max(mark, now).

      --batch input, one case a line (blank lines are skipped); every field is required, and
      "mark": null is a first use (no stored mark), where --mark is left out:
        {"written_at":[100],"now":190,"mark":200,"max_age":1000}
        {"written_at":[100],"now":190,"mark":null,"max_age":1000}
      output, one line per case in order (or {"error":"..."} for a malformed line):
        {"status":"expired","mark":200,"reasons":["clock_behind_mark"]}
      """,
    exitStatus: [
      (0, "fresh; with --batch, every line was a valid case."),
      (1, "expired."),
      (2, "unavailable: no items."),
      (64, "usage error."),
      (65, "with --batch, at least one line was malformed."),
      (74, "standard input could not be read, or standard output not written."),
    ],
    examples: [
      (
        "evaluate --written-at 100 --now 190 --mark 200 --max-age 1000",
        "expired: clock_behind_mark (the clock reads before the mark)."
      ),
      ("evaluate --written-at 100 --now 1100 --max-age 1000s --json", "fresh, as JSON."),
      ("evaluate --batch < cases.jsonl", "One result line per case line."),
    ])

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let unit = try arguments.unit()
    if arguments.flag(.batch) {
      for option in [OptionSpec.writtenAt, .now, .mark, .maxAge]
      where !arguments.values(option).isEmpty {
        throw UsageError(
          "--\(option.name) cannot be combined with --batch (cases come from stdin)")
      }
      return try EvaluateBatch.run(unit: unit, context: context)
    }
    let writtenAt = try arguments.instants(.writtenAt, unit: unit)
    guard let now = try arguments.instant(.now, unit: unit) else {
      throw UsageError("missing option '--now'")
    }
    let mark = try arguments.instant(.mark, unit: unit)
    guard let maxAge = try arguments.durationOrCount(.maxAge, unit: unit) else {
      throw UsageError("missing option '--max-age'")
    }
    guard maxAge >= .zero else {
      throw UsageError(
        "--max-age: \(arguments.value(.maxAge) ?? "") is negative; a max age must be zero or more")
    }
    let policy = try EligibilityPolicy(maxAge: maxAge)
    let evaluation = policy.evaluate(writtenAt: writtenAt, now: now, mark: mark)
    if arguments.flag(.json) {
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
