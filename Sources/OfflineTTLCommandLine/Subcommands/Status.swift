import OfflineTTL

/// `offline-ttl status`: may the cache in a store directory be used offline now?
enum Status: Subcommand {
  static let configuration = CommandConfiguration(
    name: "status",
    abstract: "Says whether the cache in a store directory may be used offline now.",
    usage: [
      "status --store <dir> --max-age <duration> [--json] [--verify]"
        + " [--clock-tolerance <duration>] [--no-boot-floor]"
    ],
    options: [
      .option("store", value: "dir", help: "The store directory (items and clock mark)."),
      .option(
        "max-age", value: "duration",
        help: "How long after its oldest item the cache may be used, with units: 7d, 12h, 1h30m."),
      .flag("json", help: "Prints one JSON object instead of name: value lines."),
      .flag(
        "verify",
        help: "Also reads every item's header and checksum (slower) and names those that disagree."),
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
      By default status reads the index header only, whatever the number of items; --verify
      also reads every item (header, payload and checksum, O(n)) and lists each item whose own
      written_at or bytes disagree with the decision (disagrees: lines; "verify" in JSON).
      Exit status: 0 fresh (and, with --verify, every item agrees); 1 expired (including every
      failure inside the store: missing, unreadable or unwritable mark, unreadable item, and an
      item that disagrees under --verify); 2 unavailable (nothing cached); 74 the store
      directory does not exist or cannot be opened, or the store is insecure (insecure_store:
      another user owns a file or directory of it, or may write it); 64 usage error.
      """)

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let (gate, maxAge, path) = try StoreCommandSupport.gate(arguments, context: context)
    let decision = gate.checkEligibility()
    let verification = arguments.flag("verify") ? gate.verifyItems(against: decision) : nil
    if arguments.flag("json") {
      var object = StoreCommandSupport.json(decision, maxAge: maxAge)
      object["store"] = .string(path)
      if let verification {
        var verify = JSONObject()
        verify["checked"] = .integer(Int64(verification.checked))
        verify["disagreeing"] = .array(
          verification.disagreeing.map { item in
            var entry = JSONObject()
            entry["key"] = item.key.map { .string($0.rawValue) } ?? .null
            entry["code"] = .string(item.code)
            entry["reason"] = .string(item.reason)
            return .object(entry)
          })
        object["verify"] = .object(verify)
      }
      context.standardOutput.writeLine(object.text)
    } else {
      var text = StoreCommandSupport.text(decision, maxAge: maxAge)
      if let verification {
        text +=
          "verified: \(verification.checked) items, "
          + "\(verification.disagreeing.count) disagree\n"
        for item in verification.disagreeing { text += "disagrees: \(item)\n" }
      }
      context.standardOutput.write(text)
    }
    if let verification, !verification.disagreeing.isEmpty, decision.status == .fresh {
      return .expired
    }
    return StoreCommandSupport.exitCode(decision)
  }
}
