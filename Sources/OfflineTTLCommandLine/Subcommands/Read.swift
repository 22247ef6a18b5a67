import Foundation
import OfflineTTL

/// `offline-ttl read`: opens the cache offline (rechecking now) and prints one item's bytes.
enum Read: Subcommand {
  static let configuration = CommandConfiguration(
    name: "read",
    abstract: "Opens the cache offline, rechecking now, and writes one item's bytes to stdout.",
    usage: [
      "read --store <dir> --max-age <duration> [--json] [options] <key>"
    ],
    options: [
      .store, .maxAge,
      .json.with(
        help: "Prints one JSON object: the item's written_at and base64 payload, then the"
          + " decision and payload_complete; on a refusal, the decision."),
    ] + StoreCommandSupport.floorOptionSpecs + StoreBackend.optionSpecs
      + TrustedTimeOptions.tpmOptionSpecs,
    positionals: [
      PositionalSpec(
        name: "key",
        help: "The item's key: 1-255 bytes of UTF-8 in NFC, no '/', NUL or control characters.")
    ],
    discussion: """
      The decision is made at this moment (never reused), and the read is refused when the
      cache is not fresh; no item is changed either way. The bytes are written exactly, with
      no newline added. With --json every refusal prints the decision's object too (an
      unreadable item and a missing key included), and the reason goes to stderr. The item is
      streamed: with --json the decision follows the payload, so an item changed in place
      while it is written still ends the object, as a refusal with payload_complete false.
      """,
    exitStatus: [
      (0, "the item's bytes were written."),
      (
        1,
        "expired: refused, or the item cannot be read (the reason is on stderr); "
          + StoreCommandSupport.sealedRefusalExitHelp
      ),
      (2, "unavailable: nothing is cached, or no item has that key."),
      (64, "usage error (an invalid key included)."),
      (74, StoreCommandSupport.unusableStoreExitHelp),
    ],
    examples: [
      ("read --store ~/.cache/myapp/offline --max-age 7d token", "Writes the item token to stdout.")
    ])

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    guard let keyText = arguments.positionals.first else { throw UsageError("missing <key>") }
    let key = try StoreCommandSupport.key(keyText)
    let (gate, maxAge, path) = try StoreCommandSupport.gate(arguments, context: context)
    let json = arguments.flag(.json)
    switch gate.openOffline() {
    case .refused(let decision):
      throw refusal(decision, key: key, json: json, maxAge: maxAge, store: path, context: context)
    case .opened(let reader):
      return try serve(
        key, reader: reader, json: json, maxAge: maxAge, store: path, context: context)
    }
  }

  /// The chunk size of a streamed read: 768 KiB, a multiple of 3 (whole base64 groups).
  static let chunkSize = OfflineCacheReader.defaultChunkSize

  /// Streams the item through one fixed buffer
  /// (``OfflineCacheReader/read(_:chunkSize:start:into:)``: the header is judged and the
  /// checksum verified before the first byte is written), raw or as base64 inside the JSON
  /// object.
  static func serve(
    _ key: CacheItemKey, reader: OfflineCacheReader, json: Bool, maxAge: Duration,
    store path: String, context: CommandContext
  ) throws -> ExitCode {
    let output = context.standardOutput
    let encoder = json ? Base64Stream(chunkSize: chunkSize) : nil
    var started = false
    let header: CacheItemHeader?
    do {
      header = try reader.read(
        key, chunkSize: chunkSize,
        start: { header in
          started = true
          guard json else { return }
          // The item's members first and the payload left open; the decision follows the
          // payload, once the read has ended (see ``jsonTail(_:)``).
          var object = JSONObject()
          object["key"] = .string(key.rawValue)
          object.instant("written_at", header.writtenAt)
          object["size"] = .integer(Int64(header.size))
          var bytes: [UInt8] = []
          object.write(to: &bytes)
          bytes.removeLast()
          bytes.append(contentsOf: #","payload_base64":""#.utf8)
          output.write(bytes: bytes)
        },
        into: { chunk in
          if let encoder {
            encoder.encode(chunk) { output.writeUnbuffered($0) }
          } else {
            output.writeUnbuffered(chunk)
          }
          if output.writeFailed { throw OutputLost() }
        })
    } catch is OutputLost {
      return .ioError
    } catch let error as OfflineReadError {
      if started {
        // Only an item changed in place while it was read gets here: part of it was written.
        // The JSON object still ends, as a refusal that says the payload is incomplete.
        if let encoder {
          encoder.finish { output.writeUnbuffered($0) }
          var tail = refusalObject(error, decision: reader.decision, key: key, maxAge: maxAge)
          tail["key"] = nil
          tail["payload_complete"] = .bool(false)
          output.write(bytes: jsonTail(tail))
        }
        throw CommandFailure(
          .expired, "refused: expired: \(refusalDetail(error)); the output is incomplete")
      }
      if let decision = error.decision {
        // A newer sign-in committed after the open and its set was refused: its decision.
        throw refusal(
          decision, key: key, json: json, maxAge: maxAge, store: path, context: context)
      }
      // Refused after opening: the decision said fresh, the recheck or the item refused.
      if json {
        output.writeLine(
          refusalObject(error, decision: reader.decision, key: key, maxAge: maxAge).text)
      }
      let insecure = error.cacheError?.code == .insecureStore
      throw CommandFailure(
        insecure ? .ioError : .expired, "refused: expired: \(refusalDetail(error))")
    }
    guard header != nil else {
      if json {
        var object = StoreCommandSupport.json(reader.decision, maxAge: maxAge)
        object["key"] = .string(key.rawValue)
        object["item"] = .null
        output.writeLine(object.text)
      }
      throw CommandFailure(.unavailable, "no item with key \(key.rawValue.debugDescription)")
    }
    if let encoder {
      encoder.finish { output.writeUnbuffered($0) }
      var tail = StoreCommandSupport.json(reader.decision, maxAge: maxAge)
      tail["payload_complete"] = .bool(true)
      output.write(bytes: jsonTail(tail))
    }
    return .success
  }

  /// The end of a streamed `--json` object after its payload's last base64 byte: the closing
  /// quote, `members`' members (the decision, or the refusal that ended the read), the closing
  /// brace and a newline. The decision comes after the payload so that the object says
  /// `fresh` only when every byte was served, and is valid JSON either way.
  static func jsonTail(_ members: JSONObject) -> [UInt8] {
    var object: [UInt8] = []
    members.write(to: &object)
    var bytes: [UInt8] = Array(#"","#.utf8)
    bytes.append(contentsOf: object.dropFirst())
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// A refused decision (at open, or of a newer sign-in's set met by the reader): its JSON object
  /// with `--json`, and the failure to exit with.
  static func refusal(
    _ decision: OfflineAccessDecision, key: CacheItemKey, json: Bool, maxAge: Duration,
    store path: String, context: CommandContext
  ) -> CommandFailure {
    if json {
      var object = StoreCommandSupport.json(decision, maxAge: maxAge)
      object["key"] = .string(key.rawValue)
      context.standardOutput.writeLine(object.text)
    }
    if let cause = StoreCommandSupport.unusableStoreCause(decision, store: path) {
      return CommandFailure(.ioError, "store '\(path)' cannot be used: \(cause)")
    }
    let insecure =
      decision.cacheError?.code == .insecureStore || decision.markError?.code == .insecureStore
    return CommandFailure(
      insecure ? .ioError : ExitCode(decision.status),
      "refused: " + StoreCommandSupport.refusal(decision))
  }

  /// The reader's refusal as one line: its code, and the store's error when there is one (which
  /// names its typed reason, e.g. `item_unauthentic`).
  static func refusalDetail(_ error: OfflineReadError) -> String {
    error.storeError.map { "\(error.code) (\($0))" } ?? "\(error)"
  }

  /// The JSON object of a read refused after the open: the reader's decision with `status`
  /// `expired`, `reasons` the refusal's own reasons (every one the recheck or the item check
  /// found), `read_error` its code and `read_error_reason` its sentence; for an item store
  /// failure `item_error` and `item_error_code`, for a mark store failure `mark_error`, and for
  /// a sealing key's problem `key_error_code`.
  static func refusalObject(
    _ error: OfflineReadError, decision: OfflineAccessDecision, key: CacheItemKey,
    maxAge: Duration
  ) -> JSONObject {
    var object = StoreCommandSupport.json(decision, maxAge: maxAge)
    object["status"] = .string(EligibilityStatus.expired.rawValue)
    object["reasons"] = .array(error.reasons.codes.map { .string($0) })
    object["read_error"] = .string("\(error.code)")
    object["read_error_reason"] = .string(error.reason)
    if let cacheError = error.cacheError {
      object["item_error"] = .string(refusalDetail(error))
      object["item_error_code"] = .string("\(cacheError.code)")
    }
    if let markError = error.markError { object["mark_error"] = .string(markError.description) }
    StoreCommandSupport.addKeyErrorCode(
      &object, [error.cacheError, error.markError].compactMap { $0 })
    object["key"] = .string(key.rawValue)
    return object
  }
}

/// Standard output stopped taking bytes: the streamed read stops (the tool reports it).
private struct OutputLost: Error {}
