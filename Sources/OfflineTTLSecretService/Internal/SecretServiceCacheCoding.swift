#if SecretService
  import Foundation
  import OfflineTTL

  /// The secrets of ``SecretServiceCacheStore``: each item's value, and the index of every key's
  /// `writtenAt` that makes ``SecretServiceCacheStore/summary()`` one call.
  ///
  /// Item value (binary): `OTLI`, version byte 1, `writtenAt` as a big-endian Int64 (nanoseconds
  /// since the Unix epoch, exact: the daemon's own 1-second `modified` stamp is not used), the
  /// payload, and a big-endian CRC-32 of every byte before it.
  ///
  /// Index value (text): `offline-ttl-index 1`, `state clean|dirty`, one `<writtenAt>\t<key>`
  /// line per item (keys hold no control characters), and `crc32 <hex>`. A commit marks it dirty
  /// before it touches an item and clean after the last one, so an interrupted commit is seen and
  /// the index is rebuilt from the items.
  enum SecretServiceCacheCoding {
    static let itemContentType = "application/octet-stream"
    static let indexContentType = "text/plain"
    private static let magic: [UInt8] = Array("OTLI".utf8) + [1]

    /// An item's secret bytes.
    static func encodeItem(payload: Data, writtenAt: WallClockInstant) -> [UInt8] {
      var bytes = magic
      bytes.reserveCapacity(magic.count + 12 + payload.count)
      withUnsafeBytes(of: writtenAt.nanosecondsSinceEpoch.bigEndian) { bytes += $0 }
      bytes += payload
      withUnsafeBytes(of: SecretServiceMarkCoding.checksum(bytes).bigEndian) { bytes += $0 }
      return bytes
    }

    /// The payload and `writtenAt` in an item's secret bytes, or `nil` when they do not decode
    /// (wrong magic or version, too short, bad checksum).
    static func decodeItem(_ bytes: [UInt8]) -> (payload: Data, writtenAt: WallClockInstant)? {
      guard bytes.count >= magic.count + 12, Array(bytes.prefix(magic.count)) == magic else {
        return nil
      }
      let body = bytes[..<(bytes.count - 4)]
      let stored = bytes.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      guard SecretServiceMarkCoding.checksum(Array(body)) == stored else { return nil }
      let time = bytes[magic.count..<(magic.count + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      return (
        Data(body[(magic.count + 8)...]),
        WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: time))
      )
    }

    /// The index: `writtenAt` by key, and whether a commit was interrupted.
    struct Index: Equatable {
      var writtenAt: [String: WallClockInstant]
      var isClean: Bool
    }

    static func encodeIndex(_ index: Index) -> [UInt8] {
      var text = "offline-ttl-index 1\nstate \(index.isClean ? "clean" : "dirty")\n"
      for (key, instant) in index.writtenAt.sorted(by: {
        $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
      }) {
        text += "\(instant.nanosecondsSinceEpoch)\t\(key)\n"
      }
      let body = Array(text.utf8)
      return body
        + Array(
          ("crc32 " + SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body)) + "\n")
            .utf8)
    }

    /// The index in a secret, or `nil` when it does not decode (it is then rebuilt).
    static func decodeIndex(_ bytes: [UInt8]) -> Index? {
      guard let text = String(validating: bytes, as: UTF8.self), text.hasSuffix("\n") else {
        return nil
      }
      var lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
      guard lines.count >= 3, let last = lines.popLast(), last.hasPrefix("crc32 "),
        let stored = UInt32(last.dropFirst(6), radix: 16),
        SecretServiceMarkCoding.checksum(Array(bytes[..<(bytes.count - last.utf8.count - 1)]))
          == stored,
        lines[0] == "offline-ttl-index 1", lines[1] == "state clean" || lines[1] == "state dirty"
      else { return nil }
      var writtenAt: [String: WallClockInstant] = [:]
      for line in lines.dropFirst(2) {
        guard let tab = line.firstIndex(of: "\t"), let nanoseconds = Int64(line[..<tab]) else {
          return nil
        }
        writtenAt[String(line[line.index(after: tab)...])] = WallClockInstant(
          nanosecondsSinceEpoch: nanoseconds)
      }
      return Index(writtenAt: writtenAt, isClean: lines[1] == "state clean")
    }
  }
#endif
