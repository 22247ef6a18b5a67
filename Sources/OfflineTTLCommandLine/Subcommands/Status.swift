import OfflineTTL

/// `offline-ttl status`: may the cache in a store directory be used offline now?
enum Status: Subcommand {
  static let configuration = CommandConfiguration(
    name: "status",
    abstract: "Says whether the cache in a store directory may be used offline now.",
    usage: [
      "status --store <dir> --max-age <duration> [--json] [--clock-tolerance <duration>]"
        + " [--no-boot-floor]"
    ],
    options: [
      .option("store", value: "dir", help: "The store directory (items and clock mark)."),
      .option(
        "max-age", value: "duration",
        help: "How long after its oldest item the cache may be used, with units: 7d, 12h, 1h30m."),
      .flag("json", help: "Prints one JSON object instead of name: value lines."),
    ] + StoreCommandSupport.floorOptionSpecs + StoreBackend.optionSpecs,
    discussion: """
      Observes the real wall clock through the clock mark (durably, before answering fresh) and
      prints status, reasons, now, mark, deadline, generation and item count. Items are never
      changed; an empty cache writes nothing. In JSON every instant is given twice, as x (RFC
      3339, UTC, nanoseconds) and x_ns (integer nanoseconds since the epoch).
      The boot-clock floor (on unless --no-boot-floor) also refuses a wall clock more than the
      tolerance behind the time the boot clock proves has passed since the last sign-in
      (clock_behind_elapsed_time), and judges age from the later of the two; the output adds
      floor, boot_id, tolerance, effective_now and effective_clock (wall or floor).
      Exit status: 0 fresh; 1 expired (including every failure inside the store: missing,
      unreadable or unwritable mark, unreadable item); 2 unavailable (nothing cached); 74 the
      store directory does not exist or cannot be opened; 64 usage error.
      """)

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let (gate, maxAge, path) = try StoreCommandSupport.gate(arguments, context: context)
    let decision = gate.checkEligibility()
    if arguments.flag("json") {
      var object = StoreCommandSupport.json(decision, maxAge: maxAge)
      object["store"] = .string(path)
      context.standardOutput.writeLine(object.text)
    } else {
      context.standardOutput.write(StoreCommandSupport.text(decision, maxAge: maxAge))
    }
    return ExitCode(decision.status)
  }
}
