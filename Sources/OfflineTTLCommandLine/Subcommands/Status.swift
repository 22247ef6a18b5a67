import OfflineTTL

/// `offline-ttl status`: may the cache in a store directory be used offline now?
enum Status: Subcommand {
  static let configuration = CommandConfiguration(
    name: "status",
    abstract: "Says whether the cache in a store directory may be used offline now.",
    usage: [
      "status --store <dir> --max-age <duration> [--json] [--verify] [options]"
    ],
    options: [
      .store, .maxAge, .json.with(help: "Prints one JSON object instead of name: value lines."),
      .verify,
    ] + StoreCommandSupport.floorOptionSpecs + StoreBackend.optionSpecs
      + TrustedTimeOptions.tpmOptionSpecs,
    discussion: """
      Observes the real wall clock through the clock mark (durably, before answering fresh; a
      rise of less than the 1 s mark resolution is not written, and mark is then the stored mark,
      up to 1 s behind now) and prints status, reasons, now, mark, deadline, generation and item
      count. Items are never changed; an empty cache writes nothing. In JSON every instant is given twice, as x (RFC
      3339, UTC, nanoseconds) and x_ns (integer nanoseconds since the epoch).
      The boot-clock floor (on unless --no-boot-floor) also refuses a wall clock more than the
      tolerance behind the time the boot clock proves has passed since the last sign-in
      (clock_behind_elapsed_time), and judges age from the later of the two; the output adds
      floor, boot_id, tolerance, effective_now and effective_clock (wall, floor, or trusted). Ages,
      "in ..." and the deadline are measured from effective_now, the time that decided.
      By default status reads the index header only, whatever the number of items; --verify
      also reads every item (header, payload and checksum, O(n)) and lists each item whose own
      written_at or bytes disagree with the decision (disagrees: lines; "verify" in JSON).
      After a sign-in with --server-time, trusted time decides while its anchor holds (server
      time + time elapsed on the boot clock, or on the TPM clock with --tpm, - uncertainty -
      2s - 500 ppm): the output adds trusted_time, the wall clock's offset from it
      (wall_offset), the anchor and the clock that carried it (carried_by); with --tpm also the
      TPM's reading, whether its power-loss allowance was added, and tpm_changed or
      tpm_unavailable when the TPM is not the recorded one or cannot be read (tpm_error then
      says why: tpm_timed_out when it did not answer within --tpm-timeout).
      A staging the mark record does not commit (left by a sign-in killed before its commit
      point, or a copy put back) is never read; it is listed until the next sign-in removes it
      (stale_staging: lines, the first 3 by name and then how many more; in JSON
      "stale_stagings" with those names and "stale_staging_count"). However many there are,
      status opens at most 16 of them.
      Both outputs end by naming the protections the decision applied: mark_rule and
      boot_clock_floor (active, off, unavailable, or superseded while a server anchor decides),
      server_anchor (holding, none, lost) and tpm_clock (in_use, not_configured, unavailable).
      """,
    exitStatus: [
      (0, "fresh: the cache may be used offline (with --verify: and every item agrees)."),
      (
        1,
        "expired, including every failure inside the store: a missing, unreadable or unwritable"
          + " mark, an unreadable item, an item that disagrees under --verify; "
          + StoreCommandSupport.sealedRefusalExitHelp
      ),
      (2, "unavailable: nothing is cached."),
      (64, "usage error."),
      (74, StoreCommandSupport.unusableStoreExitHelp),
    ],
    examples: [
      ("status --store ~/.cache/myapp/offline --max-age 7d", "Says whether the cache is fresh."),
      (
        "status --store ~/.cache/myapp/offline --max-age 12h --json", "The same as one JSON object."
      ),
    ])

  /// The most stale stagings `status` names; the rest are counted.
  static let namedStaleStagings = 3

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let (gate, maxAge, path) = try StoreCommandSupport.gate(arguments, context: context)
    let checked = gate.checkEligibility()
    let verification = arguments.flag(.verify) ? gate.verifyItems(against: checked) : nil
    // A sign-in that committed during the verify: its set was verified, against its decision.
    let decision = verification?.decision ?? checked
    // Stagings the mark record does not commit (a killed sign-in's, or a copy put back): never
    // read; reported so that a leftover is visible before the next sign-in removes it.
    let stale =
      (gate.cache as? DirectoryCacheStore).flatMap {
        try? $0.staleStagings(naming: Self.namedStaleStagings)
      } ?? (count: 0, names: [])
    // The index reads fresh but an item disagrees with it: not fresh, in the text, the JSON
    // and the exit status alike.
    let disagrees =
      decision.status == .fresh && !(verification?.disagreeing.isEmpty ?? true)
    if arguments.flag(.json) {
      var object = StoreCommandSupport.json(decision, maxAge: maxAge)
      object["store"] = .string(path)
      if disagrees {
        object["status"] = .string(EligibilityStatus.expired.rawValue)
        object["reasons"] = .array([.string("item_unreadable")])
        object["deadline"] = .null
        object["index_status"] = .string(decision.status.rawValue)
      }
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
      if stale.count > 0 {
        object["stale_stagings"] = .array(stale.names.map { .string($0) })
        object["stale_staging_count"] = .integer(Int64(stale.count))
      }
      object["protections"] = protections(decision.protections)
      context.standardOutput.writeLine(object.text)
    } else {
      var text = StoreCommandSupport.text(decision, maxAge: maxAge)
      if let verification, disagrees {
        // The first two lines say so, so that a reader of the text alone never sees
        // `status: fresh` beside exit 1.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.count > 1 {
          lines[0] =
            "status: expired (the index reads fresh, but \(verification.disagreeing.count) of "
            + "\(verification.checked) items disagree under --verify)"
          lines[1] = "reasons: item_unreadable"
        }
        if let deadline = lines.firstIndex(where: { $0.hasPrefix("deadline: ") }) {
          lines[deadline] = "deadline: none"
        }
        text = lines.joined(separator: "\n")
      }
      if let verification {
        text +=
          "verified: \(verification.checked) items, "
          + "\(verification.disagreeing.count) disagree\n"
        for item in verification.disagreeing { text += "disagrees: \(item)\n" }
      }
      for name in stale.names {
        text +=
          "stale_staging: cache/\(name) (no committed sign-in's: never read; the next sign-in"
          + " removes it)\n"
      }
      if stale.count > stale.names.count {
        text +=
          "stale_staging: \(stale.count - stale.names.count) more (\(stale.count) in all: never"
          + " read; the next sign-in removes them)\n"
      }
      context.standardOutput.write(text)
      context.standardOutput.writeLine(protectionsLine(decision.protections))
    }
    if disagrees { return .expired }
    return StoreCommandSupport.exitCode(for: decision, store: path, context: context)
  }

  /// The protections by name, in a fixed order: `mark_rule` and `boot_clock_floor` (`active`,
  /// `off`, `unavailable`, `superseded`), `server_anchor` (`holding`, `none`, `lost`) and
  /// `tpm_clock` (`in_use`, `not_configured`, `unavailable`). One list for the JSON object and
  /// the text line, so that a new protection is added in one place.
  static func protectionStates(_ protections: OfflineProtections) -> [(String, String)] {
    [
      ("mark_rule", protections.markRule.rawValue),
      ("boot_clock_floor", protections.bootClockFloor.rawValue),
      ("server_anchor", protections.serverAnchor.rawValue),
      ("tpm_clock", protections.tpmClock.rawValue),
    ]
  }

  /// `{"mark_rule": ..., "boot_clock_floor": ..., "server_anchor": ..., "tpm_clock": ...}`.
  static func protections(_ protections: OfflineProtections) -> JSONValue {
    var object = JSONObject()
    for (name, state) in protectionStates(protections) { object[name] = .string(state) }
    return .object(object)
  }

  /// `protections: mark_rule=active boot_clock_floor=active server_anchor=none ...`.
  static func protectionsLine(_ protections: OfflineProtections) -> String {
    "protections: "
      + protectionStates(protections).map { "\($0)=\($1)" }.joined(separator: " ")
  }
}
