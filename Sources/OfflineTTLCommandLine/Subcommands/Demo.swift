import Foundation
@_spi(SystemCalls) import OfflineTTL
import OfflineTTLTestDoubles

/// `offline-ttl demo`: the whole story on a fresh temporary store with real files and an
/// injected clock. The README's main-job command.
enum Demo: Subcommand {
  static let configuration = CommandConfiguration(
    name: "demo",
    abstract: "Tells the whole story on a fresh temporary store, moving an injected clock.",
    usage: [
      "demo [--max-age <duration>] [--json] [--keep] [options]"
    ],
    options: [
      .maxAge.with(help: "The max age to use, with units, at least 1d; default 7d."),
      .json.with(help: "Prints one JSON object per step (JSON Lines) instead of a table."),
      .keep,
      .seal.with(
        help: "Tells the story on a store sealed with this key (a key file outside the store,"
          + " created when missing, or the Secret Service keyring)."),
    ] + StoreCommandSupport.floorOptionSpecs
      + TrustedTimeOptions.tpmOptionSpecs(
        tpmHelp: "Also records the TPM 2.0 clock (a TCTI configuration such as"
          + " swtpm:host=127.0.0.1,port=2321) with every mark, and says what it recorded."),
    discussion: """
      Creates a store directory under the temporary directory and, with a clock that starts at
      the real time and is then moved by hand: signs in online and writes two items (fresh);
      moves the clock past the max age (expired, too_old); rolls it back twice (expired both
      times, clock_behind_mark, and the mark is not lowered); tries to read offline (refused);
      checks that every item's bytes and written_at are unchanged; signs in online again
      (fresh). Then the boot-clock floor: the wall clock is held one second after that sign-in
      while the injected boot clock lets two days pass; the mark alone sees nothing wrong (the
      mark rule alone, shown in the next row, says fresh), the floor refuses it
      (clock_behind_elapsed_time); the clock then catches up with real time (fresh). One row
      per step: the clock, the status, the reasons, the mark and the floor, as offsets from the
      start time t0. The real files and the real clock-mark store are used; only the clocks are
      injected. The store is created in $TMPDIR (/tmp when TMPDIR is unset or empty).
      With --tpm the same story runs with a real TPM clock beside the injected clocks (it
      carries time across reboots; here it only sees the seconds the demo really takes), and a
      last line gives the TPM reading recorded with the mark.
      With --seal the header names the key and says whether the demo created it, and each JSON
      object adds sealed_with and key_created. A keyring key (--seal secret-service) is named
      by the temporary store, so it is deleted with it at the end (kept with --keep); a key
      file stays.
      """,
    exitStatus: [
      (0, "the story went as described."),
      (64, "usage error (a max age under 1d, or too long for the story's clock, included)."),
      (70, "the story did not go as described: a bug."),
      (
        74,
        "the temporary store could not be created, the --seal key cannot be read or created, the"
          + " --tpm TPM cannot be read, or standard output cannot be written."
      ),
    ],
    examples: [
      ("demo", "Tells the story with a max age of 7d."),
      ("demo --json --max-age 30d", "The same as JSON Lines, with a max age of 30d."),
    ])

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let maxAge = try arguments.duration(.maxAge) ?? .seconds(7 * 86_400)
    // The story checks at t0+1h and t0+1d expecting no too_old: a shorter max age would make it
    // "fail" (exit 70, a bug) on valid input, so it is a usage error instead.
    guard maxAge >= .seconds(86_400) else {
      throw UsageError(
        "--max-age: the demo needs at least 1d (its story checks at t0+1h and t0+1d), got "
          + StoreCommandSupport.durationText(maxAge))
    }
    // The story moves the clock to t0 + max age + 1d at most (and t0 + 3d): past the last
    // representable instant the clock would saturate and the story "fail" (exit 70, a bug) on
    // input that is only too large, so that is a usage error too.
    let start = context.clock.now()
    let furthest = max(maxAge, .seconds(2 * 86_400)) + .seconds(86_400)
    guard let step = furthest.exactNanoseconds,
      !start.nanosecondsSinceEpoch.addingReportingOverflow(step).overflow
    else {
      throw UsageError(
        "--max-age: \(StoreCommandSupport.durationText(maxAge)) is too long for the demo: its"
          + " clock would move past the last representable time (about the year 2262)")
    }
    let json = arguments.flag(.json)
    // Every usage error before the temporary store is made.
    let floor = try StoreCommandSupport.floorOptions(arguments)
    let policy = try StoreCommandSupport.policy(maxAge: maxAge, floor: floor)
    let markRuleOnly = try StoreCommandSupport.policy(
      maxAge: maxAge, floor: FloorOptions(usesBootClockFloor: false))
    let seal = try StoreBackend.parseSeal(arguments)
    let tpm = try TrustedTimeOptions.tpmClock(arguments, context: context)
    if let tpm {
      // Checked before the story: a TPM that cannot be read would refuse every step.
      do throws(TPMClockError) {
        _ = try tpm.now()
      } catch {
        throw CommandFailure(.ioError, "--tpm: \(error)")
      }
    }
    let base = temporaryDirectory(context.environment)
    let path = base + "/offline-ttl-demo-" + UUID().uuidString
    // mkdir(2) through the syscall seam rather than FileManager: its error is a one-line
    // reason, not an NSError dump.
    do {
      try Syscalls().mkdir(path, mode: 0o700)
    } catch {
      throw CommandFailure(
        .ioError, "cannot create a temporary store in \(base): \(error.message)")
    }
    defer {
      if !arguments.flag(.keep) { try? FileManager.default.removeItem(atPath: path) }
    }
    let clock = ManualWallClock(start)
    let bootClock = ManualBootClock(bootID: DemoStory.bootID, sinceBoot: DemoStory.startUptime)
    // One keyring budget for the whole demo, as for every other command: the key's load or
    // creation, every step of the story and the key's clean-up share it, and a keyring that
    // did not answer is not asked again (the clean-up included).
    var backend = StoreBackend(kind: .file, seal: seal)
    backend.startKeyringBudget()
    let sealing = try backend.sealing(at: path)
    // A keyring key is named by this temporary store's path: it goes with the store (and stays
    // with it under --keep). A key file is left: its path is the user's.
    defer {
      if !arguments.flag(.keep), let sealing { _ = StoreBackend.deleteKeyringKey(sealing) }
    }
    var sealedWith: DemoStory.Seal?
    if let sealing {
      // The key before the story (and its table): a key that cannot be had or made (a key
      // path with no name, a missing or insecure directory, another user's file, a keyring that
      // cannot be used) is the environment's failure (exit 74), as on every other command, not
      // a story that failed (exit 70, a bug).
      do throws(SealingKeyError) {
        try sealing.checkKeptOutside(storeDirectory: path)
        // Said in the header: a key this demo made, or one that was there (a key that
        // another process makes in between counts as made here: it is new to the user too).
        var created = false
        do throws(SealingKeyError) {
          _ = try sealing.loadKey()
        } catch  where error.code == .missing {
          _ = try sealing.loadOrCreateKey()
          created = true
        }
        sealedWith = DemoStory.Seal(key: "\(sealing)", created: created)
      } catch {
        throw CommandFailure(.ioError, "--seal: key_unavailable: \(error)")
      }
    }
    let cache = DirectoryCacheStore(atPath: path, sealing: sealing)
    let marks = FileClockMarkStore(atPath: path, sealing: sealing)
    let gate = OfflineAccessGate(
      cache: cache, marks: marks, policy: policy, clock: clock, bootClock: bootClock,
      tpmClock: tpm)
    let markRuleOnlyGate = OfflineAccessGate(
      cache: cache, marks: marks, policy: markRuleOnly, clock: clock, bootClock: bootClock,
      tpmClock: tpm)
    var story = DemoStory(
      gate: gate, markRuleOnlyGate: markRuleOnlyGate, clock: clock, bootClock: bootClock,
      maxAge: maxAge,
      json: json, context: context)
    story.seal = sealedWith
    if !json {
      let sealed = sealedWith.map {
        ", sealed with \($0.key) (\($0.created ? "created now" : "existing"))"
      }
      context.standardOutput.writeLine(
        "offline-ttl demo: a fresh store in \(path)\(sealed ?? ""), max age \(StoreCommandSupport.durationText(maxAge)),"
          + " an injected clock starting at t0 = \(start.rfc3339) (the real time)"
          + " and an injected boot clock")
    }
    do {
      try story.tell()
    } catch let failure as CommandFailure {
      throw failure
    } catch {
      throw CommandFailure(.software, "the demo failed: \(error)")
    }
    if tpm != nil {
      try reportTPM(marks: marks, json: json, context: context)
    }
    if arguments.flag(.keep) && !json {
      context.standardOutput.writeLine("store kept: \(path)")
    }
    return .success
  }

  /// The last line of `demo --tpm`: the TPM reading recorded with the mark.
  ///
  /// - Throws: ``CommandFailure`` (exit 70) when the record holds no TPM reading: a bug.
  private static func reportTPM(
    marks: FileClockMarkStore, json: Bool, context: CommandContext
  ) throws(CommandFailure) {
    guard let reading = (try? marks.read())?.trustedTime?.lastTPM else {
      throw CommandFailure(.software, "the demo failed: the mark holds no TPM reading")
    }
    if json {
      var object = JSONObject()
      object["tpm_clock_ms"] = .unsignedInteger(reading.clockMilliseconds)
      object["tpm_reset_count"] = .integer(Int64(reading.resetCount))
      object["tpm_restart_count"] = .integer(Int64(reading.restartCount))
      object["tpm_safe"] = .bool(reading.isSafe)
      object["tpm_identity"] = .string(reading.identity.description)
      context.standardOutput.writeLine(object.text)
    } else {
      context.standardOutput.writeLine(
        "TPM: the mark records the TPM clock at \(reading.clockMilliseconds) ms (reset"
          + " \(reading.resetCount), restart \(reading.restartCount), safe"
          + " \(reading.isSafe ? "yes" : "no"), identity \(reading.identity)); after a reboot"
          + " the time since then is carried by the TPM, not the boot clock")
    }
  }

  /// `$TMPDIR` without trailing slashes, or `/tmp` when it is unset or empty (an empty value
  /// would otherwise put the store in `/`).
  static func temporaryDirectory(_ environment: [String: String]) -> String {
    var path = environment["TMPDIR"] ?? ""
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    return path.isEmpty ? "/tmp" : path
  }
}
