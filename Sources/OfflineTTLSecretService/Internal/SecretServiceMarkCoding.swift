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
  ///
  /// A record with trusted time (a server anchor, or a TPM reading) is format version 2: the
  /// same lines with `offline-ttl-mark 2`, then seven more before the checksum, `none` for an
  /// absent value; a TPM reading is `<identity, 64 hex digits> <clock ms> <reset count>
  /// <restart count> <safe 0|1>` and a boot reading `<boot id> <since boot, ns>`:
  ///
  /// ```
  /// trusted-lower-bound 1700000000000000000
  /// trusted-elapsed 5000000000
  /// trusted-anchor 1700000002000000000 250000000
  /// trusted-anchor-boot 6f1c…-… 5000000000
  /// trusted-anchor-tpm 9a0c…e1 500000 1 0 1
  /// trusted-last-boot 6f1c…-… 10000000000
  /// trusted-last-tpm 9a0c…e1 505000 1 0 1
  /// ```
  ///
  /// A record bound to a machine (``ClockMarkRecord/machine``) is format version 3: the eight
  /// lines of version 1 with `offline-ttl-mark 3`, then `machine <32 hex digits>`, then the seven
  /// trusted-time lines of version 2 when the record has trusted time (so 9 or 16 lines before
  /// the checksum).
  ///
  /// An unbound record without trusted time is written as version 1, and one with trusted time
  /// as version 2, byte for byte as before; all three versions are read (versions 1 and 2 as
  /// unbound records).
  enum SecretServiceMarkCoding {
    static let contentType = "text/plain"
    static let largestValue = 1024
    private static let names = [
      "offline-ttl-mark", "generation", "mark", "floor", "anchor-boot", "anchor-since-boot",
      "elapsed-since-sign-in", "untrusted",
    ]
    private static let trustedNames = [
      "trusted-lower-bound", "trusted-elapsed", "trusted-anchor", "trusted-anchor-boot",
      "trusted-anchor-tpm", "trusted-last-boot", "trusted-last-tpm",
    ]
    private static let machineName = "machine"

    /// The secret's bytes for `record`.
    static func encode(_ record: ClockMarkRecord) -> [UInt8] {
      let floor = record.floor
      let version = record.machine != nil ? "3" : record.trustedTime == nil ? "1" : "2"
      var values = [
        version, String(record.generation),
        String(record.mark.nanosecondsSinceEpoch),
        String(floor.lowerBound.nanosecondsSinceEpoch), floor.anchorBootID.description,
        String(floor.anchorSinceBoot.exactNanoseconds ?? .max),
        String(floor.elapsedSinceSignIn.exactNanoseconds ?? .max), floor.isUntrusted ? "1" : "0",
      ]
      var allNames = names
      if let machine = record.machine {
        allNames.append(machineName)
        values.append(machine.description)
      }
      if let trusted = record.trustedTime {
        allNames += trustedNames
        values += [
          String(trusted.lowerBound.nanosecondsSinceEpoch),
          String(trusted.elapsedSinceAnchor.exactNanoseconds ?? .max),
          trusted.anchor.map {
            "\($0.serverTime.nanosecondsSinceEpoch) \($0.uncertainty.exactNanoseconds ?? .max)"
          } ?? "none",
          text(trusted.anchor?.boot), text(trusted.anchor?.tpm), text(trusted.lastBoot),
          text(trusted.lastTPM),
        ]
      }
      var text = ""
      for (name, value) in zip(allNames, values) { text += name + " " + value + "\n" }
      let body = Array(text.utf8)
      return body + Array(("crc32 " + hex(checksum(body)) + "\n").utf8)
    }

    private static func text(_ boot: BootClockReading?) -> String {
      guard let boot else { return "none" }
      return "\(boot.bootID) \(boot.sinceBoot.exactNanoseconds ?? .max)"
    }

    private static func text(_ tpm: TPMClockReading?) -> String {
      guard let tpm else { return "none" }
      return "\(tpm.identity) \(tpm.clockMilliseconds) \(tpm.resetCount) \(tpm.restartCount)"
        + " \(tpm.isSafe ? "1" : "0")"
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
      guard let first = lines.first, first.hasPrefix(names[0] + " ") else {
        throw unreadable(.malformed, "the mark secret does not start with its format line")
      }
      let version = first.dropFirst(names[0].count + 1)
      guard version == "1" || version == "2" || version == "3" else {
        throw unreadable(.unknownVersion, "the mark secret has format version \(version)")
      }
      // Version 3: the machine line, then the trusted-time lines when there are more lines.
      let bound = version == "3"
      let baseNames = bound ? names + [machineName] : names
      let hasTrusted = version == "2" || (bound && lines.count > baseNames.count)
      let allNames = hasTrusted ? baseNames + trustedNames : baseNames
      var fields: [Substring] = []
      for (line, name) in zip(lines, allNames) {
        guard line.hasPrefix(name + " ") else { break }
        fields.append(line.dropFirst(name.count + 1))
      }
      guard lines.count == allNames.count, fields.count == allNames.count,
        let generation = UInt64(fields[1]), let mark = Int64(fields[2]),
        let lowerBound = Int64(fields[3]), let boot = BootID(uuidString: fields[4]),
        let sinceBoot = Int64(fields[5]), let elapsed = Int64(fields[6]),
        fields[7] == "0" || fields[7] == "1"
      else { throw unreadable(.malformed, "the mark secret's fields do not parse") }
      let floor = BootClockFloor(
        lowerBound: WallClockInstant(nanosecondsSinceEpoch: lowerBound), anchorBootID: boot,
        anchorSinceBoot: .nanoseconds(sinceBoot), elapsedSinceSignIn: .nanoseconds(elapsed),
        isUntrusted: fields[7] == "1")
      var machine: MachineID?
      if bound {
        guard let id = MachineID(machineIDText: fields[names.count]) else {
          throw unreadable(.malformed, "the mark secret's machine id does not parse")
        }
        machine = id
      }
      var trustedTime: TrustedTime?
      if hasTrusted {
        trustedTime = try decodeTrusted(fields[baseNames.count...])
      }
      return ClockMarkRecord(
        generation: generation, mark: WallClockInstant(nanosecondsSinceEpoch: mark), floor: floor,
        trustedTime: trustedTime, machine: machine)
    }

    /// The seven trusted-time fields of a version-2 secret.
    private static func decodeTrusted(_ fields: ArraySlice<Substring>) throws(StoreError)
      -> TrustedTime
    {
      let values = Array(fields)
      let malformed = unreadable(.malformed, "the mark secret's trusted-time fields do not parse")
      guard values.count == 7, let lowerBound = Int64(values[0]), let elapsed = Int64(values[1])
      else { throw malformed }
      let anchorBoot = try boot(values[3], malformed)
      let anchorTPM = try tpm(values[4], malformed)
      var anchor: TrustedTimeAnchor?
      if values[2] != "none" {
        let parts = values[2].split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let server = Int64(parts[0]), let uncertainty = Int64(parts[1]),
          let made = try? TrustedTimeAnchor(
            serverTime: WallClockInstant(nanosecondsSinceEpoch: server),
            uncertainty: .nanoseconds(uncertainty), boot: anchorBoot, tpm: anchorTPM)
        else { throw malformed }
        anchor = made
      } else if anchorBoot != nil || anchorTPM != nil {
        throw malformed
      }
      return TrustedTime(
        anchor: anchor, lowerBound: WallClockInstant(nanosecondsSinceEpoch: lowerBound),
        elapsedSinceAnchor: .nanoseconds(elapsed), lastBoot: try boot(values[5], malformed),
        lastTPM: try tpm(values[6], malformed))
    }

    private static func boot(_ text: Substring, _ malformed: StoreError) throws(StoreError)
      -> BootClockReading?
    {
      if text == "none" { return nil }
      let parts = text.split(separator: " ", omittingEmptySubsequences: false)
      guard parts.count == 2, let id = BootID(uuidString: parts[0]),
        let sinceBoot = Int64(parts[1])
      else { throw malformed }
      return BootClockReading(bootID: id, sinceBoot: .nanoseconds(sinceBoot))
    }

    private static func tpm(_ text: Substring, _ malformed: StoreError) throws(StoreError)
      -> TPMClockReading?
    {
      if text == "none" { return nil }
      let parts = text.split(separator: " ", omittingEmptySubsequences: false)
      guard parts.count == 5, parts[0].utf8.count == 64, let clock = UInt64(parts[1]),
        let reset = UInt32(parts[2]), let restart = UInt32(parts[3]),
        parts[4] == "0" || parts[4] == "1"
      else { throw malformed }
      var bytes: [UInt8] = []
      var digits = parts[0].utf8.makeIterator()
      while let high = digits.next(), let low = digits.next() {
        guard let h = hexValue(high), let l = hexValue(low) else { throw malformed }
        bytes.append(h << 4 | l)
      }
      guard let identity = TPMIdentity(bytes: bytes) else { throw malformed }
      return TPMClockReading(
        identity: identity, clockMilliseconds: clock, resetCount: reset, restartCount: restart,
        isSafe: parts[4] == "1")
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
      switch digit {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
      default: nil
      }
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
