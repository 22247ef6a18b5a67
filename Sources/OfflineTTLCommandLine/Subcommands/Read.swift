import Foundation
import OfflineTTL

/// `offline-ttl read`: opens the cache offline (rechecking now) and prints one item's bytes.
enum Read: Subcommand {
  static let configuration = CommandConfiguration(
    name: "read",
    abstract: "Opens the cache offline, rechecking now, and writes one item's bytes to stdout.",
    usage: [
      "read --store <dir> --max-age <duration> [--json] [--clock-tolerance <duration>]"
        + " [--no-boot-floor] <key>"
    ],
    options: [
      .option("store", value: "dir", help: "The store directory (items and clock mark)."),
      .option(
        "max-age", value: "duration",
        help: "How long after its oldest item the cache may be used, with units: 7d, 12h, 1h30m."),
      .flag(
        "json",
        help: "Prints one JSON object (the decision, the item's written_at and base64 payload)."),
    ] + StoreCommandSupport.floorOptionSpecs + StoreBackend.optionSpecs,
    positionals: [
      PositionalSpec(
        name: "key",
        help: "The item's key: 1-255 bytes of UTF-8 in NFC, no '/', NUL or control characters.")
    ],
    discussion: """
      The decision is made at this moment (never reused), and the read is refused when the
      cache is not fresh; no item is changed either way. The bytes are written exactly, with
      no newline added.
      Exit status: 0 the item was written; 1 expired (the reason is on stderr); 2 unavailable
      (nothing cached, or no item with that key); 74 the store directory does not exist or
      cannot be opened, or the store is insecure (insecure_store); 64 usage error (an invalid key included).
      """)

  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode {
    guard let keyText = arguments.positionals.first else { throw UsageError("missing <key>") }
    let key = try StoreCommandSupport.key(keyText)
    let (gate, maxAge, _) = try StoreCommandSupport.gate(arguments, context: context)
    let json = arguments.flag("json")
    switch gate.openOffline() {
    case .refused(let decision):
      if json {
        context.standardOutput.writeLine(
          StoreCommandSupport.json(decision, maxAge: maxAge).text)
      }
      throw CommandFailure(
        StoreCommandSupport.exitCode(decision),
        "refused: " + StoreCommandSupport.refusal(decision))
    case .opened(let reader):
      let item: CacheItem?
      do {
        item = try reader.item(forKey: key)
      } catch {
        let insecure = error.cacheError?.code == .insecureStore
        throw CommandFailure(insecure ? .ioError : .expired, "refused: expired: \(error)")
      }
      guard let item else {
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
