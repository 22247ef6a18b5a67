#if SecretService
  import CZlib
  import OfflineTTL

  /// The clock mark record as the text of a secret: one `name value` line per field in a fixed
  /// order, then a CRC-32 of every byte before that line. Text so that `secret-tool lookup`
  /// shows it to a person; the exact `mark` (nanoseconds since the Unix epoch) lives here, not in
  /// the daemon's own 1-second `modified` stamp.
  ///
  /// ```
  /// offline-ttl-mark 1
  /// generation 3
  /// mark 1700000000123456789
  /// floor 1700000000000000000
  /// anchor-boot 6f1c…-…
  /// anchor-since-boot 5000000000
  /// elapsed-since-sign-in 0
  /// untrusted 0
  /// crc32 8e1f0c2a
  /// ```
  enum SecretServiceMarkCoding {
    static let contentType = "text/plain"
    static let largestValue = 1024
    private static let names = [
      "offline-ttl-mark", "generation", "mark", "floor", "anchor-boot", "anchor-since-boot",
      "elapsed-since-sign-in", "untrusted",
    ]

    /// The secret's bytes for `record`.
    static func encode(_ record: ClockMarkRecord) -> [UInt8] {
      let floor = record.floor
      let values = [
        "1", String(record.generation), String(record.mark.nanosecondsSinceEpoch),
        String(floor.lowerBound.nanosecondsSinceEpoch), floor.anchorBootID.description,
        String(floor.anchorSinceBoot.exactNanoseconds ?? .max),
        String(floor.elapsedSinceSignIn.exactNanoseconds ?? .max), floor.isUntrusted ? "1" : "0",
      ]
      var text = ""
      for (name, value) in zip(names, values) { text += name + " " + value + "\n" }
      let body = Array(text.utf8)
      return body + Array(("crc32 " + hex(checksum(body)) + "\n").utf8)
    }

    /// The record in a secret's bytes.
    ///
    /// - Throws: `StoreError` `unreadable` with `empty`, `oversized`, `badChecksum`,
    ///   `unknownVersion` or `malformed`.
    static func decode(_ bytes: [UInt8]) throws(StoreError) -> ClockMarkRecord {
      guard !bytes.isEmpty else { throw unreadable(.empty, "the mark secret is empty") }
      guard bytes.count <= largestValue else {
        throw unreadable(.oversized, "the mark secret has \(bytes.count) bytes")
      }
      guard let text = String(validating: bytes, as: UTF8.self), text.hasSuffix("\n") else {
        throw unreadable(.malformed, "the mark secret is not lines of text")
      }
      var lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
      guard let last = lines.popLast(), last.hasPrefix("crc32 "),
        let stored = UInt32(last.dropFirst(6), radix: 16)
      else { throw unreadable(.malformed, "the mark secret has no checksum line") }
      let body = Array(bytes[..<(bytes.count - last.utf8.count - 1)])
      guard checksum(body) == stored else {
        throw unreadable(.badChecksum, "the mark secret fails its checksum")
      }
      var fields: [Substring] = []
      for (line, name) in zip(lines, names) {
        guard line.hasPrefix(name + " ") else { break }
        fields.append(line.dropFirst(name.count + 1))
      }
      guard let version = fields.first else {
        throw unreadable(.malformed, "the mark secret does not start with its format line")
      }
      guard version == "1" else {
        throw unreadable(.unknownVersion, "the mark secret has format version \(version)")
      }
      guard lines.count == names.count, fields.count == names.count,
        let generation = UInt64(fields[1]), let mark = Int64(fields[2]),
        let lowerBound = Int64(fields[3]), let boot = BootID(uuidString: fields[4]),
        let sinceBoot = Int64(fields[5]), let elapsed = Int64(fields[6]),
        fields[7] == "0" || fields[7] == "1"
      else { throw unreadable(.malformed, "the mark secret's fields do not parse") }
      let floor = BootClockFloor(
        lowerBound: WallClockInstant(nanosecondsSinceEpoch: lowerBound), anchorBootID: boot,
        anchorSinceBoot: .nanoseconds(sinceBoot), elapsedSinceSignIn: .nanoseconds(elapsed),
        isUntrusted: fields[7] == "1")
      return ClockMarkRecord(
        generation: generation, mark: WallClockInstant(nanosecondsSinceEpoch: mark), floor: floor)
    }

    private static func unreadable(_ why: StoreError.UnreadableReason, _ reason: String)
      -> StoreError
    {
      StoreError(code: .unreadable, unreadableReason: why, message: reason)
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
      let value = bytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
      return UInt32(truncatingIfNeeded: value)
    }

    static func hex(_ value: UInt32) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 8 - digits.count) + digits
    }
  }
#endif
