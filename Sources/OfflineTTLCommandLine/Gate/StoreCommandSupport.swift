import Foundation
@_spi(SystemCalls) import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What `status`, `read`, `sign-in` and `demo` share: opening a store directory, formatting a
/// decision as text or JSON, durations with units, key checks.
enum StoreCommandSupport {
  /// The sealed refusals of `status` and `read` (exit 1), ending their exit-1 text.
  static let sealedRefusalExitHelp =
    "with --seal, a file that does not authenticate (item_unauthentic, index_unauthentic,"
    + " mark_unauthentic), a store not sealed with this key (seal_mismatch), or a key that is"
    + " missing or cannot be used (key_unavailable, with the key's own code, e.g. key_missing);"
    + " without --seal, a sealed store (key_required)."

  /// The help text of exit status 74 for the offline commands (`status`, `read`): the store
  /// cannot be used, and the decision (expired) is still printed where it could be made.
  static let unusableStoreExitHelp =
    "the store cannot be used: a lock of it stayed held past --lock-timeout (lock_timed_out,"
    + " naming the lock file and the limit); its directory (or its cache directory, or the"
    + " mark's lock file) does not exist, is a symbolic link, is not a directory, or cannot be opened;"
    + " or it is insecure (insecure_store: another user owns a file or directory of it, or"
    + " may write it, or a file of it is hard-linked); or, with --backend secret-service,"
    + " the keyring cannot be reached (store_unusable: no_session_bus, no_provider,"
    + " collection_locked, ...; the decision, expired, is still printed); or standard"
    + " output cannot be written."

  /// The store directory's path after checking that it exists and can be opened.
  ///
  /// - Throws: ``CommandFailure`` with exit 74 and the real cause when it is a symbolic link,
  ///   does not exist, has a name too long for the file system (`ENAMETOOLONG`), is not a
  ///   directory, or cannot be listed.
  static func existingStore(_ path: String) throws(CommandFailure) -> String {
    try checkStorePath(path, mayBeMissing: false)
    let system = Syscalls()
    do {
      system.closeIgnoringErrors(try system.open(path, [.readOnly, .directory, .nonBlocking]))
    } catch {
      throw CommandFailure(
        .ioError,
        "store directory '\(path)' cannot be opened: \(FileChecks.describe(error.rawValue))")
    }
    return path
  }

  /// Refuses (exit 74) a store directory, or its `cache/`, that another user owns or may write
  /// (`insecure_store`), before anything is read or written in it.
  static func checkStoreDirectory(_ path: String) throws(CommandFailure) {
    do {
      try DirectoryCacheStore(atPath: path).checkStoreDirectory()
    } catch  where error.code == .insecureStore {
      throw CommandFailure(.ioError, "\(error)")
    } catch {
      // Any other problem is reported with the decision (see exitCode(for:store:context:)).
    }
  }

  /// `path` without trailing `/` and `/.` components (`a/b/.//` → `a/b`), so that `lstat` sees
  /// the last name itself rather than what a link there points to.
  static func lastName(of path: String) -> String {
    var text = Substring(path)
    while text.count > 1 {
      if text.hasSuffix("/") {
        text = text.dropLast()
      } else if text.hasSuffix("/.") {
        text = text.dropLast(2)
      } else {
        break
      }
    }
    return text.isEmpty ? "/" : String(text)
  }

  /// Checks a store path before a store is opened on it, so that the message names the real
  /// cause (the stores see only the `errno` of an open that refuses symbolic links, `ENOTDIR`).
  ///
  /// - Parameters:
  ///   - path: The `--store` value.
  ///   - mayBeMissing: Whether a missing directory is fine (`sign-in` creates it, `mark` reports
  ///     an absent record).
  /// - Throws: ``CommandFailure`` with exit 74: a symbolic link (never followed), not a
  ///   directory, missing (unless allowed), or any other `lstat(2)` failure with its `errno`
  ///   (`ENAMETOOLONG`, `ENOTDIR` for a path component, `EACCES`).
  static func checkStorePath(_ path: String, mayBeMissing: Bool) throws(CommandFailure) {
    // The stores never follow a symbolic link (see the Rules article, "Durable and private on
    // disk"): say so here (exit 74) rather than report an open error or every item unreadable.
    // Every spelling names the same directory: `link/` and `link/.` are the link.
    switch FileChecks.kind(lastName(of: path)) {
    case .directory: return
    case .symbolicLink:
      throw CommandFailure(
        .ioError, "store '\(path)' is a symbolic link (symbolic links are not followed)")
    case .other:
      throw CommandFailure(.ioError, "store '\(path)' is not a directory")
    case .failed(let code) where code == ENOENT:
      if mayBeMissing { return }
      throw CommandFailure(.ioError, "store directory '\(path)' does not exist")
    case .failed(let code) where code == ENAMETOOLONG:
      throw CommandFailure(
        .ioError,
        "store path '\(path)' is too long for the file system: \(FileChecks.describe(code))")
    case .failed(let code) where code == ENOTDIR:
      throw CommandFailure(
        .ioError,
        "store path '\(path)': a component of the path is not a directory:"
          + " \(FileChecks.describe(code))")
    case .failed(let code):
      throw CommandFailure(
        .ioError, "store path '\(path)' cannot be examined: \(FileChecks.describe(code))")
    }
  }

  /// The cause, when a decision's store errors say that the store itself cannot be used (its
  /// cache directory, or the clock mark's directory or lock file) rather than that something
  /// inside it is unreadable; `nil` otherwise. `status` and `read` exit 74 with it.
  ///
  /// - Parameters:
  ///   - decision: The decision (expired, carrying the store errors).
  ///   - path: The store directory, to look at what stands at its `cache` entry.
  static func unusableStoreCause(_ decision: OfflineAccessDecision, store path: String)
    -> String?
  {
    let structural: [StoreError.Code] = [.storeUnusable, .lockFailed, .lockTimedOut]
    // (A sealed set left unchecked behind the mark's lock carries the mark's own error: that
    // lock, not the item cache, is named.)
    if let error = decision.cacheError, structural.contains(error.code),
      error.description != decision.markError?.description
    {
      let cache = path + "/cache"
      if FileChecks.kind(cache) == .symbolicLink {
        return "the cache directory '\(cache)' is a symbolic link (symbolic links are not"
          + " followed)"
      }
      // `store_unusable (no_session_bus): …`: the code with its typed reason, as `mark_error`.
      return "the item cache cannot be opened: \(error)"
    }
    if let error = decision.markError, structural.contains(error.code) {
      let what =
        error.code == .lockFailed || error.code == .lockTimedOut
        ? "the clock mark's lock" : "the clock mark"
      return "\(what) cannot be used: \(error); the mark was neither read nor written"
    }
    return nil
  }

  /// The exit status of a decision on a store: 74 when the store is insecure (`insecure_store`,
  /// named in the decision's output), 74 with `error: store '<path>' cannot be used: <cause>` on
  /// standard error when the store itself is unusable, else the status's (0, 1, 2).
  static func exitCode(
    for decision: OfflineAccessDecision, store path: String, context: CommandContext
  ) -> ExitCode {
    if decision.cacheError?.code == .insecureStore || decision.markError?.code == .insecureStore {
      // insecure_store: another user owns a file or directory of the store, or may write it.
      return .ioError
    }
    if let cause = unusableStoreCause(decision, store: path) {
      context.standardError.writeError("store '\(path)' cannot be used: \(cause)")
      return .ioError
    }
    return ExitCode(decision.status)
  }

  /// A gate over the directory's item cache and clock mark, on the context's wall and boot
  /// clocks.
  ///
  /// - Parameters:
  ///   - path: The store directory.
  ///   - maxAge: The max age.
  ///   - floor: `--clock-tolerance` and `--no-boot-floor` (see ``floorOptions(_:)``).
  ///   - backend: `--backend` (see ``StoreBackend``); files by default.
  ///   - tpm: The `--tpm` clock (``TrustedTimeOptions/tpmClock(_:context:)``), or `nil`.
  ///   - context: Supplies the clocks.
  static func gate(
    store path: String, maxAge: Duration, floor: FloorOptions = FloorOptions(),
    backend: StoreBackend = .file, tpm: (any TPMClock)? = nil, context: CommandContext
  ) throws -> OfflineAccessGate {
    OfflineAccessGate(
      cache: try backend.cache(at: path), marks: try backend.marks(at: path),
      policy: try policy(maxAge: maxAge, floor: floor), clock: context.clock,
      bootClock: context.bootClock, tpmClock: tpm)
  }

  /// The policy for a max age and the floor options.
  ///
  /// - Parameters:
  ///   - maxAge: The max age.
  ///   - floor: `--clock-tolerance` and `--no-boot-floor` (see ``floorOptions(_:)``).
  /// - Returns: The policy.
  /// - Throws: ``UsageError`` (exit 64), `--max-age: ` and the policy's reason, when the policy
  ///   rejects a value.
  static func policy(maxAge: Duration, floor: FloorOptions) throws(UsageError)
    -> EligibilityPolicy
  {
    do {
      return try EligibilityPolicy(
        maxAge: maxAge, usesBootClockFloor: floor.usesBootClockFloor,
        clockTolerance: floor.clockTolerance)
    } catch {
      throw UsageError("--max-age: \(error.reason)")
    }
  }

  /// The gate of a command that judges a store (`status`, `read`), from its options: every
  /// option first (`--max-age`, `--backend` and `--seal` (``StoreBackend``), `--clock-tolerance`
  /// and `--no-boot-floor` (``floorOptions(_:)``) and the policy they make, `--tpm`
  /// (``TrustedTimeOptions/tpmClock(_:context:)``)), then the store (``existingStore(_:)``,
  /// ``checkStoreDirectory(_:)``).
  ///
  /// - Parameters:
  ///   - arguments: The command's parsed arguments.
  ///   - context: Supplies the clocks.
  /// - Returns: The gate, the max age and the store directory's path.
  /// - Throws: ``UsageError`` (exit 64) for a missing or invalid option; ``CommandFailure`` (exit
  ///   74) when the store directory cannot be used.
  static func gate(_ arguments: ParsedArguments, context: CommandContext) throws -> (
    gate: OfflineAccessGate, maxAge: Duration, store: String
  ) {
    // Every usage error (exit 64) before anything about the store is looked at (exit 74): each
    // value was checked by the reader; what depends on several options is judged here.
    let maxAge = try Self.maxAge(arguments)
    let backend = try StoreBackend.parse(arguments)
    let floor = try floorOptions(arguments)
    _ = try policy(maxAge: maxAge, floor: floor)
    let tpm = try TrustedTimeOptions.tpmClock(arguments, context: context)
    let storeValue = try arguments.requiredValue(.store)
    let path = try existingStore(storeValue)
    try checkStoreDirectory(path)
    let gate = try Self.gate(
      store: path, maxAge: maxAge, floor: floor, backend: backend, tpm: tpm, context: context)
    return (gate, maxAge, path)
  }

  /// The required `--max-age` duration.
  static func maxAge(_ arguments: ParsedArguments) throws(UsageError) -> Duration {
    guard let maxAge = try arguments.duration(.maxAge) else {
      throw UsageError("missing option '--max-age'")
    }
    return maxAge
  }

  /// A validated item key, or a usage error (exit 64) naming the rule that was broken.
  static func key(_ text: String) throws(UsageError) -> CacheItemKey {
    do {
      return try CacheItemKey(text)
    } catch {
      throw UsageError(error.reason)
    }
  }

  /// A duration with units, largest first: `7d`, `1h30m`, `500ms`, `0s`; negative with `-`.
  /// Exact to the nanosecond for any duration, also beyond `Int64` nanoseconds (the distance
  /// between two instants at the ends of their range is about 584 years).
  static func durationText(_ duration: Duration) -> String {
    if duration == .zero { return "0s" }
    // `components` truncates toward zero: both parts carry the duration's sign.
    let (seconds, attoseconds) = duration.components
    var text = duration < .zero ? "-" : ""
    var rest = seconds.magnitude
    for (symbol, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] as [(String, UInt64)]
    where rest >= size {
      text += "\(rest / size)\(symbol)"
      rest %= size
    }
    var nanoseconds = attoseconds.magnitude / 1_000_000_000
    for (symbol, size) in [("ms", 1_000_000), ("us", 1_000), ("ns", 1)] as [(String, UInt64)]
    where nanoseconds >= size {
      text += "\(nanoseconds / size)\(symbol)"
      nanoseconds %= size
    }
    return text
  }

  /// A duration for people: whole seconds and up (`6d23h59m59s`), or exact below a second.
  static func roundedDurationText(_ duration: Duration) -> String {
    let seconds = duration.components.seconds
    if seconds == 0 { return durationText(duration) }
    return durationText(.seconds(seconds))
  }

  /// The reason codes joined by commas, or `none`.
  static func reasonsText(_ reasons: EligibilityReasons) -> String {
    reasons.isEmpty ? "none" : reasons.description
  }

  /// The time that decided: the trusted time when a server anchor held, else the effective now
  /// of the boot-clock floor when it was checked (the later of the wall clock and the floor),
  /// else the wall clock's reading. Printed ages,
  /// "in ..." and time left are measured from it, so they agree with the reasons (a `too_old`
  /// decided by the floor is never printed beside an age under the max age).
  static func decidingTime(_ decision: OfflineAccessDecision) -> WallClockInstant {
    decision.effectiveNow
  }

  /// The decision as `name: value` lines.
  static func text(_ decision: OfflineAccessDecision, maxAge: Duration) -> String {
    func instant(_ value: WallClockInstant?) -> String { value?.rfc3339 ?? "none" }
    var lines = [
      "status: \(decision.status)",
      "reasons: \(reasonsText(decision.reasons))",
      "now: \(decision.now.rfc3339)",
      "mark: \(instant(decision.mark))",
    ]
    if let deadline = decision.deadline {
      lines.append(
        "deadline: \(deadline.rfc3339)"
          + " (in \(roundedDurationText(decidingTime(decision).duration(to: deadline))))"
      )
    } else {
      lines.append("deadline: none")
    }
    lines.append("generation: " + (decision.generation.map { "\($0)" } ?? "none"))
    lines.append("item_count: " + (decision.items.map { "\($0.count)" } ?? "unknown"))
    if let oldest = decision.items?.oldest {
      lines.append(
        "oldest: \(oldest.rfc3339)"
          + " (age \(roundedDurationText(oldest.duration(to: decidingTime(decision)))))")
    }
    lines.append("max_age: \(durationText(maxAge))")
    for (name, error) in storeErrors(decision) { lines.append("\(name): \(error)") }
    lines += floorLines(decision)
    lines += trustedTimeLines(decision)
    return lines.joined(separator: "\n") + "\n"
  }

  /// The decision as a JSON object: every instant as `x` (RFC 3339) and `x_ns`, durations as
  /// text with units and `_ns`.
  static func json(_ decision: OfflineAccessDecision, maxAge: Duration) -> JSONObject {
    var object = JSONObject()
    object["status"] = .string(decision.status.rawValue)
    object["reasons"] = .array(decision.reasons.codes.map { .string($0) })
    object.instant("now", decision.now)
    object.instant("mark", decision.mark)
    object.instant("deadline", decision.deadline)
    object["generation"] = decision.generation.map { .unsignedInteger($0) } ?? .null
    object["item_count"] = decision.items.map { .integer(Int64($0.count)) } ?? .null
    object.instant("oldest", decision.items?.oldest)
    object.instant("newest", decision.items?.newest)
    duration(&object, "max_age", maxAge)
    object["mark_error"] = .null
    object["item_error"] = .null
    for (name, error) in storeErrors(decision) { object[name] = .string(error.description) }
    addKeyErrorCode(&object, storeErrors(decision).map(\.error))
    addFloor(&object, decision)
    addTrustedTime(&object, decision)
    return object
  }

  /// Adds `key_error_code`, the sealing key's own problem (`key_missing`, `key_wrong_size`,
  /// `key_insecure_mode`, …: `StoreError.keyProblem`) of the first of `errors` that has one;
  /// nothing when none has (the key is not at fault).
  static func addKeyErrorCode(_ object: inout JSONObject, _ errors: [StoreError]) {
    if let problem = errors.lazy.compactMap(\.keyProblem).first {
      object["key_error_code"] = .string(problem.description)
    }
  }

  /// Adds a duration as `key` (text with units) and `key_ns` (integer nanoseconds).
  static func duration(_ object: inout JSONObject, _ key: String, _ value: Duration) {
    object[key] = .string(durationText(value))
    object[key + "_ns"] = value.exactNanoseconds.map { .integer($0) } ?? .null
  }

  /// One line for standard error per floor reason, with the values it was judged on.
  static func floorRefusal(_ decision: OfflineAccessDecision) -> String {
    if decision.reasons.contains(.bootClockUnavailable) {
      return "; the boot-clock floor is on but cannot be judged: no boot clock can be read now,"
        + " or the mark record has no floor anchor (it was written by `mark reset`, or by a"
        + " sign-in that could not read the boot clock; an online sign-in anchors it again);"
        + " on a system without a boot clock, run with --no-boot-floor"
    }
    guard let check = decision.floorCheck, !check.reasons.isEmpty else { return "" }
    var text = ""
    if check.reasons.contains(.clockBehindElapsedTime) {
      text +=
        "; the wall clock (\(check.wall.rfc3339)) is \(roundedDurationText(check.behindFloor))"
        + " behind the boot-clock floor (\(check.floor.rfc3339)), more than the tolerance"
        + " \(durationText(check.tolerance))"
    }
    if check.reasons.contains(.bootClockInconsistent) {
      text += "; the boot clock went backward: the floor is untrusted until an online sign-in"
    }
    return text
  }

  /// The store errors of a decision, each under the name the output gives it: `mark_error`
  /// and `item_error`, except that a problem of the sealing key or seal that both stores report
  /// (the same `key_unavailable`, `key_required` or `seal_mismatch`: the key, not a file, is at
  /// fault) is named once, as `key_error`, with the mark store's sentence.
  static func storeErrors(_ decision: OfflineAccessDecision) -> [(name: String, error: StoreError)]
  {
    if let mark = decision.markError, let items = decision.cacheError, mark.code == items.code,
      EligibilityReasons.sealing(mark.code) != nil
    {
      return [("key_error", mark)]
    }
    return [("mark_error", decision.markError), ("item_error", decision.cacheError)]
      .compactMap { name, error in error.map { (name, $0) } }
  }

  /// The one-line refusal for standard error: `expired: clock_behind_mark` plus the store error.
  static func refusal(_ decision: OfflineAccessDecision) -> String {
    var text = "\(decision.status)"
    if !decision.reasons.isEmpty { text += ": \(decision.reasons)" }
    if decision.status == .unavailable { text += ": nothing is cached" }
    for (_, error) in storeErrors(decision) { text += " (\(error))" }
    return text + floorRefusal(decision) + futureItemRefusal(decision)
      + trustedTimeRefusal(decision)
  }

  /// For `item_from_future`: when the newest item was written and how to recover. With the
  /// clock also behind the mark, the clock was set back since the item was written (it is
  /// usable again once the clock is right); otherwise the item was written while the wall clock
  /// was ahead, and since a sign-in keeps the items it does not write, only a sign-in that
  /// writes that item again makes it usable.
  static func futureItemRefusal(_ decision: OfflineAccessDecision) -> String {
    guard decision.reasons.contains(.itemFromFuture) else { return "" }
    let newest = decision.items?.newest.map { " (the newest at \($0.rfc3339))" } ?? ""
    if decision.reasons.contains(.clockBehindMark) {
      return "; an item is dated after now\(newest): the wall clock reads earlier than when it"
        + " was written (and than the clock mark): set it right, or sign in online"
    }
    return "; an item is dated after now\(newest): it was written while the wall clock was"
      + " ahead, and stays refused until an online sign-in writes it again (sign-in --put)"
  }
}
