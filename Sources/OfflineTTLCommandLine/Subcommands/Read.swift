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
        help: "Prints one JSON object: the decision, and the item's written_at and base64 payload;"
          + " on a refusal, the decision."),
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
      unreadable item and a missing key included), and the reason goes to stderr.
      """,
    exitStatus: [
      (0, "the item's bytes were written."),
      (1, "expired: refused, or the item cannot be read (the reason is on stderr)."),
      (2, "unavailable: nothing is cached, or no item has that key."),
      (64, "usage error (an invalid key included)."),
      (
        74,
        "the store cannot be used: its directory (or its cache directory, or the mark's lock"
          + " file) does not exist, is a symbolic link, is not a directory, or cannot be opened;"
          + " or it is insecure (insecure_store: another user owns a file or directory of it, or"
          + " may write it); or standard output cannot be written."
      ),
    ],
    examples: [
      ("read --store /var/tmp/app-cache --max-age 7d token", "Writes the item token to stdout.")
    ])

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    guard let keyText = arguments.positionals.first else { throw UsageError("missing <key>") }
    let key = try StoreCommandSupport.key(keyText)
    let (gate, maxAge, path) = try StoreCommandSupport.gate(arguments, context: context)
    let json = arguments.flag(.json)
    switch gate.openOffline() {
    case .refused(let decision):
      if json {
        var object = StoreCommandSupport.json(decision, maxAge: maxAge)
        object["key"] = .string(key.rawValue)
        context.standardOutput.writeLine(object.text)
      }
      if let cause = StoreCommandSupport.unusableStoreCause(decision, store: path) {
        throw CommandFailure(.ioError, "store '\(path)' cannot be used: \(cause)")
      }
      let insecure =
        decision.cacheError?.code == .insecureStore || decision.markError?.code == .insecureStore
      throw CommandFailure(
        insecure ? .ioError : ExitCode(decision.status),
        "refused: " + StoreCommandSupport.refusal(decision))
    case .opened(let reader):
      let item: CacheItem?
      do {
        item = try reader.item(forKey: key)
      } catch {
        // Refused after opening: the decision said fresh, the item cannot be served. The
        // store's own error names its typed reason (e.g. item_unauthentic).
        let detail = error.storeError.map { "\(error.code) (\($0))" } ?? "\(error)"
        if json {
          var object = StoreCommandSupport.json(reader.decision, maxAge: maxAge)
          object["status"] = .string(EligibilityStatus.expired.rawValue)
          object["reasons"] = .array(EligibilityReasons.itemUnreadable.codes.map { .string($0) })
          object["item_error"] = .string(detail)
          if let code = error.storeError?.code { object["item_error_code"] = .string("\(code)") }
          object["key"] = .string(key.rawValue)
          context.standardOutput.writeLine(object.text)
        }
        let insecure = error.cacheError?.code == .insecureStore
        throw CommandFailure(insecure ? .ioError : .expired, "refused: expired: \(detail)")
      }
      guard let item else {
        if json {
          var object = StoreCommandSupport.json(reader.decision, maxAge: maxAge)
          object["key"] = .string(key.rawValue)
          object["item"] = .null
          context.standardOutput.writeLine(object.text)
        }
        throw CommandFailure(.unavailable, "no item with key \(key.rawValue.debugDescription)")
      }
      if json {
        var object = StoreCommandSupport.json(reader.decision, maxAge: maxAge)
        object["key"] = .string(key.rawValue)
        object.instant("written_at", item.writtenAt)
        object["size"] = .integer(Int64(item.payload.count))
        object["payload_base64"] = .string(item.payload.base64EncodedString())
        context.standardOutput.writeLine(object.text)
      } else {
        context.standardOutput.write(bytes: item.payload)
      }
      return .success
    }
  }
}
