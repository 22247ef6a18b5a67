import Foundation
@_spi(SignInReport) import OfflineTTL

/// `offline-ttl sign-in`: the online path, standing for a successful server sign-in.
enum SignIn: Subcommand {
  static let configuration = CommandConfiguration(
    name: "sign-in",
    abstract: "Stands for a successful online sign-in: resets the clock mark and writes items.",
    usage: [
      "sign-in --store <dir> [--put <key>=<path> ...] [--json] [options]"
    ],
    options: [
      .store.with(
        help: "The store directory; created (mode 0700) when missing, its parent must exist."),
      .put, .json.with(help: "Prints one JSON object instead of a line of text."),
    ] + TrustedTimeOptions.serverTimeOptionSpecs + StoreBackend.optionSpecs
      + TrustedTimeOptions.tpmOptionSpecs,
    discussion: """
      Resets the clock mark to the real wall clock now, in a new generation (even when now is
      earlier than the old mark: the recovery after a fast clock was corrected), and writes
      every --put item stamped with that time, in one atomic step: after a crash the store holds
      the state before or after, never a mix. Concurrent sign-ins take turns; each succeeds.
      Items not named are kept, except those a read would refuse: each is read and checked as
      read checks it (a regular file of this user, the size its header or the index says, the
      payload's checksum, or with --seal its authentication, generation and store), and an item
      that fails (corrupt, cut short, unreadable, not a regular file, copied from elsewhere) is
      removed; so is every old item when --seal seals a store that was unsealed (or sealed with
      another key): they cannot be authenticated. The confirmation then names what was dropped
      and why (with --json, "dropped" lists their keys and "dropped_items" gives each key with
      the code and reason a read refuses it with; both present whenever --seal is given or an
      item was dropped).
      Every file is read before anything is written.
      With --server-time (the time the app received over its authenticated connection, with
      --server-time-uncertainty for how far off it may be) the sign-in also anchors trusted
      time: from then on status and read judge age by server time + elapsed time - uncertainty
      - 2s - 500 ppm, carried by the boot clock (and, with --tpm, by the TPM clock across
      reboots), whatever the wall clock says; the items are stamped with that trusted time.
      With --tpm the TPM's clock is recorded too, and a TPM that cannot be read refuses the
      sign-in (nothing is written).
      """,
    exitStatus: [
      (
        0,
        "signed in: the mark was reset and the items written, and the confirmation printed"
          + " (when finishing the sign-in failed after it was committed, a warning on stderr"
          + " says so: readers see the new items, and the next sign-in finishes it; with"
          + " --backend secret-service such a failure is exit 74 instead)."
      ),
      (
        3,
        "signed in (committed), but the confirmation could not be written to standard output;"
          + " stderr says what was committed. Do not sign in again to retry the output."
      ),
      (64, "usage error (an invalid or repeated key, or an invalid server time, included)."),
      (
        74,
        "nothing was committed: a lock of the store stayed held past --lock-timeout"
          + " (lock_timed_out, naming the lock file), the store cannot be opened or written"
          + " (with --backend secret-service: the keyring cannot be reached, store_unusable), a"
          + " file or directory of it is another user's, writable by others or hard-linked"
          + " (insecure_store), the --seal key cannot be used or made (key_unavailable with the"
          + " key's own code, e.g. key_insecure_mode, key_wrong_size, key_io; or lock_timed_out:"
          + " key_lock_timed_out), an input file cannot be read, or the --tpm TPM cannot be read"
          + " (with the reason). With --backend secret-service, also: the mark was reset but"
          + " writing the items to the keyring failed (sign_in_incomplete on stderr; the keyring"
          + " cannot stage them, so each item may hold its new value, its old one or none: sign"
          + " in again with every --put)."
      ),
      (
        75,
        "an online session was superseded by a newer sign-in (a library session only; this"
          + " one-step sign-in never is): nothing was written, sign in again."
      ),
    ],
    examples: [
      (
        "sign-in --store ~/.cache/myapp/offline --put token=token.txt", "Signs in and writes token."
      ),
      ("sign-in --store ~/.cache/myapp/offline --json", "Resets the mark only, printing JSON."),
      (
        "sign-in --store ~/.cache/myapp/offline --server-time 2026-11-30T15:00:00Z"
          + " --server-time-uncertainty 250ms",
        "Signs in and anchors trusted time at the time the server just reported (give the"
          + " server's current time: kept items dated after an older one read item_from_future)."
      ),
    ])

  /// One `--put <key>=<path>` value: a valid key and the file's path (not opened here).
  ///
  /// - Throws: ``UsageError`` without `=`, or for a key that breaks a key rule.
  static func put(_ text: String) throws(UsageError) -> (key: CacheItemKey, path: String) {
    guard let equals = text.firstIndex(of: "=") else {
      throw UsageError("--put: expected <key>=<path>, got \(text.debugDescription)")
    }
    let key = try StoreCommandSupport.key(String(text[..<equals]))
    let path = String(text[text.index(after: equals)...])
    guard !path.isEmpty else {
      throw UsageError("--put: an empty path names no file, in \(text.debugDescription)")
    }
    return (key, path)
  }

  /// The most dropped items the confirmation line names; the rest are counted.
  static let namedDropLimit = 5

  /// The confirmation's account of what the sign-in dropped, empty when nothing: the old items
  /// its key cannot authenticate (counted, as a sealing sign-in always said), then the items a
  /// read would refuse, each named with its code (the first ``namedDropLimit``, then how many
  /// more).
  ///
  /// - Parameter dropped: The report's items, sorted by key.
  /// - Returns: `""` or text starting with `", dropped "`.
  static func droppedClause(_ dropped: [SignInReport.Dropped]) -> String {
    var text = ""
    let unauthenticated = dropped.filter(\.unauthenticatedByKey)
    if !unauthenticated.isEmpty {
      text +=
        ", dropped \(unauthenticated.count) old item\(unauthenticated.count == 1 ? "" : "s")"
        + " that this key cannot authenticate"
    }
    let refused = dropped.filter { !$0.unauthenticatedByKey }
    if !refused.isEmpty {
      let named = refused.prefix(namedDropLimit).map { "\($0.key) (\($0.code))" }
      let more = refused.count - named.count
      text +=
        ", dropped \(refused.count) old item\(refused.count == 1 ? "" : "s") that a read would"
        + " refuse: " + named.joined(separator: ", ") + (more > 0 ? " and \(more) more" : "")
    }
    return text
  }

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    let path = try arguments.requiredValue(.store)
    var backend = try StoreBackend.parse(arguments)
    let anchor = try TrustedTimeOptions.serverAnchor(arguments)
    let tpm = try TrustedTimeOptions.tpmClock(arguments, context: context)
    var puts: [(key: CacheItemKey, file: String)] = []
    var keysSeen: Set<[UInt8]> = []
    for put in arguments.values(.put) {
      let (key, file) = try Self.put(put)
      // One commit writes each key once: a second --put of the same key (byte for byte) would
      // silently replace the first and be counted twice.
      guard keysSeen.insert(Array(key.rawValue.utf8)).inserted else {
        throw UsageError("--put: key \(key.rawValue.debugDescription) given more than once")
      }
      puts.append((key, file))
    }
    // A keyring store writes one secret per item: the command's keyring time grows with them.
    backend.startKeyringBudget(itemsWritten: puts.count)
    // Every usage error above, before any input file is read (exit 74 when one cannot be).
    var items: [(CacheItemKey, Data)] = []
    for (key, file) in puts {
      switch FileChecks.contents(
        of: file, maximumLength: DirectoryCacheStore.maximumPayloadLength)
      {
      case .success(let data): items.append((key, data))
      case .failure(let error):
        throw CommandFailure(
          .ioError, "cannot read \(file.debugDescription) for item \(key): \(error)")
      }
    }
    if backend == .file { try StoreCommandSupport.checkStorePath(path, mayBeMissing: true) }
    let gate = OfflineAccessGate(
      cache: try backend.cache(at: path), marks: try backend.marks(at: path),
      policy: try! EligibilityPolicy(maxAge: .zero), clock: context.clock,
      bootClock: context.bootClock, tpmClock: tpm)
    let session: OnlineSession
    var writtenAt: WallClockInstant?
    // The sign-in says which old items it dropped (a read would refuse them) and why.
    let report = SignInReport()
    do {
      // One atomic step: the reset and the items become visible together or not at all, and a
      // concurrent sign-in is serialized with this one, never a failure.
      let begun = report.collecting {
        Result { () throws(OnlineSessionError) -> OnlineSession in
          if let anchor {
            return try gate.beginOnlineSession(
              serverTime: anchor.serverTime, uncertainty: anchor.uncertainty, writing: items)
          }
          return try gate.beginOnlineSession(writing: items)
        }
      }
      session = try begun.get()
      writtenAt = session.signInWrittenAt
      session.close()
    } catch  where error.code == .superseded {
      throw CommandFailure(.temporaryFailure, "sign-in failed: \(error)")
    } catch  where error.code == .invalidServerTime {
      throw UsageError("--server-time-uncertainty: \(error.reason)")
    } catch {
      throw CommandFailure(.ioError, "sign-in failed: \(error)")
    }
    if let unfinished = session.unfinishedRollForward, backend.kind == .secretService {
      // The keyring store cannot stage: it writes the items after the mark reset (the commit
      // point), so a failure there is not a roll forward that readers already see and the next
      // sign-in finishes, but items that were never written. Nothing claims them.
      throw CommandFailure(
        .ioError,
        "sign_in_incomplete: the clock mark was reset (generation \(session.generation), mark"
          + " \(session.record.mark.rfc3339)) but writing the items to the keyring failed:"
          + " \(unfinished); the keyring store writes them after the reset and cannot stage them,"
          + " so each of \(items.count) item\(items.count == 1 ? "" : "s") may hold its new value,"
          + " its old one or none: sign in again with every --put")
    }
    let dropped = report.dropped
    if arguments.flag(.json) {
      var object = JSONObject()
      object["store"] = .string(path)
      object["generation"] = .unsignedInteger(session.generation)
      object.instant("mark", session.record.mark)
      object.instant("written_at", writtenAt)
      object["written"] = .array(items.map { .string($0.0.rawValue) })
      if backend.seal != nil || !dropped.isEmpty {
        // Only when sealed or when something was dropped: an unsealed sign-in over sound items
        // prints exactly the object it printed before.
        object["dropped"] = .array(dropped.map { .string($0.key) })
        object["dropped_items"] = .array(
          dropped.map { item in
            var entry = JSONObject()
            entry["key"] = .string(item.key)
            entry["code"] = .string("\(item.code)")
            entry["reason"] = .string(item.reason)
            return .object(entry)
          })
      }
      if anchor != nil || tpm != nil {
        // Only with trusted time: without it the object is exactly as before.
        let trusted = session.record.trustedTime
        object.instant("trusted_time", trusted?.effectiveNow)
        object.instant("anchor_server_time", trusted?.anchor?.serverTime)
        let reading = trusted?.lastTPM
        object["tpm_clock_ms"] = reading.map { .unsignedInteger($0.clockMilliseconds) } ?? .null
      }
      context.standardOutput.writeLine(object.text)
    } else {
      var line = "signed in: generation \(session.generation), mark \(session.record.mark.rfc3339)"
      if let writtenAt {
        line += ", wrote \(items.count) item\(items.count == 1 ? "" : "s") at \(writtenAt.rfc3339)"
      }
      line += Self.droppedClause(dropped)
      if let trusted = session.record.trustedTime?.effectiveNow {
        line += ", trusted time \(trusted.rfc3339)"
      }
      if let reading = session.record.trustedTime?.lastTPM {
        line += ", TPM clock \(reading.clockMilliseconds) ms"
      }
      context.standardOutput.writeLine(line)
    }
    if let unfinished = session.unfinishedRollForward {
      // Committed (exit 0, as when it finished): say what is left for the next sign-in.
      context.standardError.writeWarning("\(unfinished)")
    }
    context.standardOutput.flush()
    if context.standardOutput.writeFailed {
      // The commit happened: exiting 74 would invite a second sign-in that is not needed.
      throw CommandFailure(
        .committedOutputLost,
        "cannot write standard output, but the sign-in was committed: generation"
          + " \(session.generation), mark \(session.record.mark.rfc3339), \(items.count) item"
          + (items.count == 1 ? "" : "s") + " written")
    }
    return .success
  }
}
