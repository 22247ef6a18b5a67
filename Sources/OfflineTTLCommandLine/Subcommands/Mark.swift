import OfflineTTL

/// `offline-ttl mark observe|reset|show`: drives a ``FileClockMarkStore`` directly, for tests
/// and QA.
enum Mark: Subcommand {
  static let configuration = CommandConfiguration(
    name: "mark",
    abstract: "Observes, resets or shows the clock mark stored in a directory.",
    usage: [
      "mark observe --store <dir> --now <t> [--now <t> ...] [--unit s|ms|ns] [--json] [options]",
      "mark reset --store <dir> --now <t> [--unit s|ms|ns] [--json] [options]",
      "mark show --store <dir> [--unit s|ms|ns] [--json] [options]",
    ],
    options: [
      .store.with(help: "The store directory.").aliased("dir"),
      .now.repeatable().with(
        help: "The wall-clock time, an integer count of --unit; observe takes several and"
          + " observes each in order."),
      .unit.with(help: "The unit of --now and of the output: s (default), ms or ns."),
      .json.with(help: "Prints {\"mark\":N,\"generation\":G} instead of a line of text."),
    ] + StoreBackend.optionSpecs
      + TrustedTimeOptions.tpmOptionSpecs(
        tpmHelp: "Records the TPM 2.0 clock (named by a TCTI configuration such as"
          + " device:/dev/tpmrm0) with each observe and reset."),
    positionals: [
      PositionalSpec(name: "action", help: "observe, reset or show.")
    ],
    discussion: """
      observe raises the mark to max(mark, now) and writes it durably (every rise is written);
      reset does what an online sign-in does: generation + 1 and mark = now, even when now is
      lower, and it works over an absent or unreadable record. It is a sign-in that writes no
      item: under the item store's lock, a killed sign-in's leftover staging is finished or
      removed first, then the mark is reset; the items are kept. show reads without writing.
      Each prints the resulting mark (in --unit, rounded down) and generation on one line:
        mark 1700000000 generation 1
      Observe and show never create anything. These commands do not anchor the boot-clock floor.
      With --tpm, observe and reset read the TPM's clock once each, before the store is
      locked, and record it; a TPM that cannot be read, or is not the one the record was written
      with (tpm_changed), is exit 1 and nothing is written.
      --dir is accepted for --store (the older spelling).
      """,
    exitStatus: [
      (0, "done."),
      (
        1,
        "the record is absent or unreadable, observe met a record of another machine"
          + " (store_from_another_machine), writing it failed, or the --tpm TPM cannot be"
          + " read or is another TPM (the typed reason is on stderr, e.g. \"error: unreadable"
          + " (bad_checksum): ...\"); with --seal, a record that does not authenticate"
          + " (mark_unauthentic), a store not sealed with this key (seal_mismatch: reset never"
          + " seals or re-seals a store, only sign-in does), a key that is missing or cannot be"
          + " used (key_unavailable: only sign-in makes a key); without --seal, a sealed store"
          + " (key_required)."
      ),
      (
        3,
        "observe or reset wrote the record, but the result could not be written to standard"
          + " output."
      ),
      (64, "usage error."),
      (
        74,
        "the directory cannot be opened or created, or its lock file cannot be used or stayed"
          + " held past --lock-timeout (lock_timed_out, naming it), or a file"
          + " of the store is another user's, writable by others or hard-linked"
          + " (insecure_store), or with --backend secret-service the keyring cannot be reached"
          + " (store_unusable); or show could not write standard output."
      ),
    ],
    examples: [
      (
        "mark reset --store ~/.cache/myapp/offline --now 1700000000",
        "Starts generation 1 at that time."
      ),
      (
        "mark observe --store ~/.cache/myapp/offline --now 1700000100 --json",
        "Raises the mark, as JSON."
      ),
    ])

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    guard let action = arguments.positionals.first else {
      throw UsageError("missing action (observe, reset or show)")
    }
    let unit = try arguments.unit()
    let directory = try arguments.requiredValue(.store)
    let nows = try arguments.instants(.now, unit: unit)
    let json = arguments.flag(.json)
    let backend = try StoreBackend.parse(arguments)
    let tpm = try TrustedTimeOptions.tpmClock(arguments, context: context)
    // Usage errors first (exit 64), then the store (exit 74).
    switch action {
    case "observe": guard !nows.isEmpty else { throw UsageError("missing option '--now'") }
    case "reset":
      guard let _ = nows.first else { throw UsageError("missing option '--now'") }
      guard nows.count == 1 else { throw UsageError("reset takes one '--now'") }
    case "show":
      guard nows.isEmpty else { throw UsageError("show takes no '--now'") }
      guard tpm == nil else {
        throw UsageError("show reads no clock: --tpm is for observe and reset")
      }
    default: throw UsageError("unknown action '\(action)' (use observe, reset or show)")
    }
    if backend == .file {
      try StoreCommandSupport.checkStorePath(directory, mayBeMissing: true)
    }
    let store = try backend.marks(at: directory)
    switch action {
    case "observe":
      guard !nows.isEmpty else { throw UsageError("missing option '--now'") }
      for now in nows {
        let observation = try Self.observation(wall: now, tpm: tpm)
        let transition = try perform { () throws(ClockMarkStoreError) in
          try store.observe(observation)
        }
        if let changed = transition.previous.tpmChange(for: observation) {
          throw CommandFailure(ExitCode(rawValue: 1), changed.description)
        }
        try print(transition.current, unit: unit, json: json, context: context, wrote: true)
      }
    case "reset":
      guard let now = nows.first else { throw UsageError("missing option '--now'") }
      guard nows.count == 1 else { throw UsageError("reset takes one '--now'") }
      let items = try backend.cache(at: directory)
      if let sealing = try backend.sealing(at: directory) {
        try Self.checkKeyKeepsItems(sealing, directory: directory, items: items)
      }
      let observation = try Self.observation(wall: now, tpm: tpm)
      let record = try reset(store, items: items, observation: observation)
      try print(record, unit: unit, json: json, context: context, wrote: true)
    case "show":
      guard nows.isEmpty else { throw UsageError("show takes no '--now'") }
      let record = try perform { () throws(ClockMarkStoreError) in try store.read() }
      try print(record, unit: unit, json: json, context: context, wrote: false)
    default:
      throw UsageError("unknown action '\(action)' (use observe, reset or show)")
    }
    return .success
  }

  /// The observation of `mark observe` and `mark reset`: `--now`, this machine's id, and the
  /// TPM's clock read now when `--tpm` was given.
  ///
  /// - Throws: ``CommandFailure`` (exit 1) with the TPM's error when it cannot be read.
  private static func observation(wall: WallClockInstant, tpm: (any TPMClock)?)
    throws(CommandFailure) -> ClockObservation
  {
    // With this machine's id (the default), as every check and sign-in reads it: reset binds
    // the record to it, and observe refuses a record of another machine.
    var observation = ClockObservation(wall: wall)
    if let tpm {
      do throws(TPMClockError) {
        observation.tpm = try tpm.now()
      } catch {
        throw CommandFailure(ExitCode(rawValue: 1), error.description)
      }
    }
    return observation
  }

  /// `mark reset` as a sign-in that writes no item: under the item store's writer lock, an
  /// earlier sign-in's leftover staging is reclaimed first (rolled forward when it was
  /// committed, removed when not), then the mark is reset as the commit point; the items are
  /// kept (<doc:Rules#Atomic-sign-in>, `docs/sign-in-protocol.md`). A reset made beside the
  /// protocol could make a killed sign-in's uncommitted staging look committed.
  ///
  /// - Throws: ``CommandFailure``: the reset's error (exit 74 when the store is unusable, else 1),
  ///   or the item store's when its lock or a leftover staging cannot be handled (nothing is
  ///   reset then).
  /// Before a sealed `mark reset`: it keeps the items, so it never makes a key and never seals
  /// the store again with another one (a mistyped `--seal` path would otherwise make a new key,
  /// and the reset's repair would drop every item that key cannot open). A missing or unusable
  /// key is `key_unavailable`; items or a mark sealed with another key are `seal_mismatch`
  /// (exit 1 both, as for the other commands). Nothing is written. A store with no items yet passes: only the
  /// key must exist.
  private static func checkKeyKeepsItems(
    _ sealing: any SealingKeyProvider, directory: String, items: any CacheItemStore
  ) throws(CommandFailure) {
    try perform { () throws(ClockMarkStoreError) in
      do throws(SealingKeyError) {
        _ = try sealing.loadKey(forStoreAt: directory)
      } catch {
        throw StoreError(
          code: error.code == .lockTimedOut ? .lockTimedOut : .keyUnavailable,
          errno: error.errno, unusableReason: error.unusableReason, keyProblem: error.code,
          message: "\(error.code) (\(sealing)): \(error.reason); mark reset never makes or"
            + " changes a key (only sign-in does): give the key the store was sealed with")
      }
      do throws(StoreError) {
        _ = try items.summary()
      } catch  where error.code == .sealMismatch || error.code == .keyRequired {
        throw StoreError(
          code: error.code,
          message: error.message
            + "; mark reset keeps the items and never seals them again: give the key the store"
            + " was sealed with, or sign in online to seal it with this one")
      } catch  where error.code == .lockTimedOut {
        // The whole limit was waited already: the reset would wait it a second time.
        throw error
      } catch {
        // Anything else (a damaged index or record, a missing store) is the reset's to judge.
      }
    }
  }

  private static func reset(
    _ marks: any ClockMarkStore, items: any CacheItemStore, observation: ClockObservation
  ) throws(CommandFailure) -> ClockMarkRecord {
    // As a sign-in: what the reset could never repair is refused before anything is written.
    try perform { () throws(ClockMarkStoreError) in try marks.checkBeforeOnlineSignIn() }
    var reset: Result<ClockMarkRecord, ClockMarkStoreError>?
    var itemError: StoreError?
    do {
      _ = try items.commitSignIn(
        CacheChanges(),
        storedGeneration: { () throws(StoreError) in try marks.generationForSignIn() },
        commitPoint: {
          reset = Result { () throws(ClockMarkStoreError) in
            try marks.resetAfterOnlineSignIn(observation)
          }
          if case .success = reset { return true }
          return false
        })
    } catch {
      itemError = error
    }
    switch reset {
    case .success(let record)?:
      // Committed; a roll forward that failed after it is finished by the next sign-in.
      return record
    case .failure(let error)?:
      return try perform { () throws(ClockMarkStoreError) -> ClockMarkRecord in throw error }
    case nil:
      let error = itemError ?? StoreError(code: .lockFailed, message: "the store ran no reset")
      return try perform { () throws(ClockMarkStoreError) -> ClockMarkRecord in throw error }
    }
  }

  /// Runs a store operation, turning its error into exit 74 (store unusable, or
  /// `insecure_store` as every subcommand) or 1 (anything else) with the typed reason.
  private static func perform<R>(_ body: () throws(ClockMarkStoreError) -> R) throws(CommandFailure)
    -> R
  {
    do {
      return try body()
    } catch {
      // The directory or its lock file cannot be used, or the store cannot be trusted: the
      // store, not the record, is the cause.
      let unusable =
        error.code == .storeUnusable || error.code == .lockFailed || error.code == .insecureStore
        || error.code == .lockTimedOut
      let code = unusable ? ExitCode.ioError : ExitCode(rawValue: 1)
      throw CommandFailure(code, error.description)
    }
  }

  /// Prints `mark <n> generation <g>` or the JSON object, and flushes (each line is an
  /// acknowledgement: the record was durable before it was printed).
  ///
  /// - Throws: ``CommandFailure`` with ``ExitCode/committedOutputLost`` when the record was
  ///   written (`wrote`) but standard output failed: the write is not to be retried.
  private static func print(
    _ record: ClockMarkRecord, unit: TimeUnit, json: Bool, context: CommandContext, wrote: Bool
  ) throws(CommandFailure) {
    let mark = record.mark.count(in: unit)
    if json {
      context.standardOutput.writeLine("{\"mark\":\(mark),\"generation\":\(record.generation)}")
    } else {
      context.standardOutput.writeLine("mark \(mark) generation \(record.generation)")
    }
    context.standardOutput.flush()
    if wrote, context.standardOutput.writeFailed {
      throw CommandFailure(
        .committedOutputLost,
        "cannot write standard output, but the mark was written: mark \(mark) generation"
          + " \(record.generation)")
    }
  }
}
