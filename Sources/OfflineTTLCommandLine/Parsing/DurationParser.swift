import OfflineTTL

/// Reads durations written with units: `500ms`, `90s`, `15m`, `12h`, `7d`, `1h30m`.
///
/// Units: `ns`, `us`, `ms`, `s`, `m` (minutes), `h`, `d` (86,400 s). A duration is one or more
/// `<digits><unit>` parts, largest unit first, each unit at most once; parts add up. A bare
/// integer is rejected, since its unit would be a guess. The total must fit in `Int64`
/// nanoseconds (about 292 years); there is no sign.
enum DurationParser {
  private static let units: [(symbol: String, nanoseconds: Int64)] = [
    ("d", 86_400_000_000_000),
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
  ]

  /// The largest duration the parser accepts: `Int64.max` nanoseconds.
  static let largest = Duration.nanoseconds(Int64.max)

  /// Parses `text`.
  ///
  /// - Returns: The duration.
  /// - Throws: ``InvalidValueError`` with code `invalidDuration` for text that is not a
  ///   duration (including a bare integer), or `outOfRange` when the total does not fit in
  ///   `Int64` nanoseconds.
  static func parse(_ text: String) throws(InvalidValueError) -> Duration {
    let examples = "write it with a unit, e.g. 500ms, 90s, 15m, 12h, 7d or 1h30m"
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty else {
      throw InvalidValueError(code: .invalidDuration, reason: "empty duration; \(examples)")
    }
    if bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
      throw InvalidValueError(
        code: .invalidDuration, reason: "'\(text)' has no unit; \(examples)")
    }
    var total: Int64 = 0
    var index = 0
    var lastUnitRank = -1
    while index < bytes.count {
      var count: Int64 = 0
      var digits = 0
      var countOverflowed = false
      while index < bytes.count, bytes[index] >= UInt8(ascii: "0"),
        bytes[index] <= UInt8(ascii: "9")
      {
        let (times10, o1) = count.multipliedReportingOverflow(by: 10)
        let (next, o2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
        if o1 || o2 { countOverflowed = true }
        count = next
        digits += 1
        index += 1
      }
      let unitStart = index
      while index < bytes.count,
        !(bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9"))
      {
        index += 1
      }
      let symbol = String(decoding: bytes[unitStart..<index], as: UTF8.self)
      guard digits > 0, let rank = units.firstIndex(where: { $0.symbol == symbol }) else {
        throw InvalidValueError(
          code: .invalidDuration,
          reason: "'\(text)' is not a duration (units: d, h, m, s, ms, us, ns); \(examples)")
      }
      guard rank > lastUnitRank else {
        throw InvalidValueError(
          code: .invalidDuration,
          reason: "'\(text)' is not a duration: write each unit once, largest first (1h30m)")
      }
      lastUnitRank = rank
      let (part, o1) = count.multipliedReportingOverflow(by: units[rank].nanoseconds)
      let (sum, o2) = total.addingReportingOverflow(part)
      guard !countOverflowed, !o1, !o2 else {
        throw InvalidValueError(
          code: .outOfRange,
          reason: "duration '\(text)' is too long: the largest is \(Int64.max)ns (about 292 years)"
        )
      }
      total = sum
    }
    return .nanoseconds(total)
  }
}
