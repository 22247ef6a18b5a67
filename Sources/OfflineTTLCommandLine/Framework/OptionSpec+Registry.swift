import OfflineTTL

#if TPM
  import OfflineTTLTPM
#endif

/// Every option of `offline-ttl`, declared once: its name, value, kind, help sentence and the
/// check of its value (``OptionSpec/check``, run by the reader before any subcommand code: a
/// bad value is exit 64 before a store is looked at).
///
/// Subcommands list these in their ``CommandConfiguration`` (a subcommand may reword the help
/// sentence with ``OptionSpec/with(help:)`` or add an alias with ``OptionSpec/aliased(_:)``) and
/// read values through them, so a misspelt option name is a compile error, not a silent `nil`.
/// The parser, `--help`, the manual page (`offline-ttl help --man`) and the bash and zsh
/// completions are all built from these declarations.
extension OptionSpec {
  /// `--store <dir>`: the store directory.
  static let store = OptionSpec.option(
    "store", value: "dir", kind: .directory, help: "The store directory (items and clock mark).")
  /// `--max-age <duration>`: the max age, with units.
  static let maxAge = OptionSpec.option(
    "max-age", value: "duration",
    help: "How long after its oldest item the cache may be used, with units: 7d, 12h, 1h30m."
  ).checked { text throws(UsageError) in
    _ = try StoreCommandSupport.policy(
      maxAge: ParsedArguments.duration(text, option: "max-age"), floor: FloorOptions())
  }
  /// `--json`: one JSON object instead of text.
  static let json = OptionSpec.flag("json", help: "Prints one JSON object instead of text.")
  /// `--verify`: `status` also reads every item and names those that disagree.
  static let verify = OptionSpec.flag(
    "verify",
    help: "Also reads every item's header and checksum (O(n)) and names those that disagree.")
  /// `--clock-tolerance <duration>`: the fixed part of the boot-clock floor's tolerance.
  static let clockTolerance = OptionSpec.option(
    "clock-tolerance", value: "duration",
    help: "How far the wall clock may be behind the boot-clock floor, plus 500 ppm; default 2s."
  ).checked { text throws(UsageError) in
    _ = try ParsedArguments.duration(text, option: "clock-tolerance")
  }
  /// `--no-boot-floor`: the clock mark alone.
  static let noBootFloor = OptionSpec.flag(
    "no-boot-floor",
    help: "Checks the wall clock against the clock mark only (the boot-clock floor off).")
  /// `--backend file|secret-service` (only in a build with the Secret Service backend).
  static let backend = OptionSpec.option(
    "backend", value: "file|secret-service", kind: .choice(["file", "secret-service"]),
    help: "Where items and the clock mark live: files in the store directory (default) or the"
      + " Secret Service keyring."
  ).checked { text throws(UsageError) in _ = try StoreBackend.parseKind(text) }
  /// `--seal file:<path>|secret-service`: seals the file store with a key kept outside it.
  static let seal = OptionSpec.option(
    "seal", value: "file:<path>|secret-service",
    help: "Seals the store with a key kept outside it: a key file (32 bytes, mode 0600) or the"
      + " Secret Service keyring; only sign-in creates a missing key."
  ).checked { text throws(UsageError) in _ = try StoreBackend.parseSeal(text) }
  /// `--put <key>=<path>`: an item to write at sign-in.
  static let put = OptionSpec.option(
    "put", value: "key=path", kind: .file, repeatable: true,
    help: "Writes the file at path as the item key; give each key once."
  ).checked { text throws(UsageError) in _ = try SignIn.put(text) }
  /// `--keep`: the demo keeps its store.
  static let keep = OptionSpec.flag(
    "keep", help: "Keeps the temporary store directory and prints its path.")
  /// `--written-at <t>`: an item's write time, an integer count of `--unit`.
  static let writtenAt = OptionSpec.option(
    "written-at", value: "t", repeatable: true,
    help: "When an item was written; give one per item (none: nothing is cached)."
  ).checked { text throws(UsageError) in _ = try IntegerParser.int64(text, option: "written-at") }
  /// `--now <t>`: the wall-clock time, an integer count of `--unit`.
  static let now = OptionSpec.option(
    "now", value: "t", help: "The wall-clock time, an integer count of --unit since the epoch."
  ).checked { text throws(UsageError) in _ = try IntegerParser.int64(text, option: "now") }
  /// `--mark <t>`: the stored clock mark, an integer count of `--unit`.
  static let mark = OptionSpec.option(
    "mark", value: "t", help: "The stored clock mark; leave out for first use."
  ).checked { text throws(UsageError) in _ = try IntegerParser.int64(text, option: "mark") }
  /// `--unit s|ms|ns`: the unit of integer times.
  static let unit = OptionSpec.option(
    "unit", value: "s|ms|ns", kind: .choice(["s", "ms", "ns"]),
    help: "The unit of every integer time and duration: s (default), ms or ns."
  ).checked { text throws(UsageError) in _ = try TimeUnit.commandLine(text, option: "unit") }
  /// `--tpm <tcti>`: the TPM 2.0 clock (only in a build with the TPM trait).
  static let tpm = OptionSpec.option(
    "tpm", value: "tcti",
    help: "Carries time across reboots with the TPM 2.0 clock named by a TCTI configuration:"
      + " device:/dev/tpmrm0, or swtpm:host=127.0.0.1,port=2321 for a software TPM."
  ).checked { text throws(UsageError) in
    #if TPM
      do throws(InvalidValueError) {
        try ESYSTPMClock.validate(text)
      } catch {
        throw UsageError("--tpm: \(error.reason)")
      }
    #endif
  }
  /// `--tpm-timeout <duration>`: the time limit of each TPM call (only with the TPM trait).
  static let tpmTimeout = OptionSpec.option(
    "tpm-timeout", value: "duration",
    help: "Gives up on a TPM that does not answer after this long (default"
      + " \(StoreCommandSupport.durationText(TrustedTimeOptions.defaultTPMTimeout))): the decision"
      + " is then refused with tpm_unavailable and the error tpm_timed_out."
  ).checked { text throws(UsageError) in
    _ = try TrustedTimeOptions.tpmTimeout(ParsedArguments.duration(text, option: "tpm-timeout"))
  }
  /// `--lock-timeout <duration>`: how long a store command waits for a store's lock.
  static let lockTimeout = OptionSpec.option(
    "lock-timeout", value: "duration",
    help: "Gives up on a store lock that another process holds for longer than this (default"
      + " \(StoreCommandSupport.durationText(FileClockMarkStore.defaultLockTimeout)), 0s: never"
      + " wait): the command is then refused with lock_timed_out, nothing changed."
  ).checked { text throws(UsageError) in
    _ = try StoreBackend.lockTimeout(ParsedArguments.duration(text, option: "lock-timeout"))
  }
  /// `--server-time <time>`: the server's time received at sign-in.
  static let serverTime = OptionSpec.option(
    "server-time", value: "time",
    help: "Anchors trusted time at the server's time (RFC 3339, or integer seconds since the"
      + " epoch) from the app's authenticated connection."
  ).checked { text throws(UsageError) in _ = try TrustedTimeOptions.serverTime(text) }
  /// `--server-time-uncertainty <duration>`: how far off the server time may be.
  static let serverTimeUncertainty = OptionSpec.option(
    "server-time-uncertainty", value: "duration",
    help: "How far off --server-time may be (half the round trip, say), with units; default 0s."
  ).checked { text throws(UsageError) in
    _ = try ParsedArguments.duration(text, option: "server-time-uncertainty")
  }
  /// `--batch`: JSON Lines cases on standard input.
  static let batch = OptionSpec.flag(
    "batch",
    help: "Reads one JSON case per line from standard input and writes one result per line.")
}
