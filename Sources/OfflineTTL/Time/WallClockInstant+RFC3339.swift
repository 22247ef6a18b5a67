extension WallClockInstant {
  /// The instant as an RFC 3339 UTC timestamp with nine fractional digits, e.g.
  /// `2026-11-30T04:28:15.123456789Z` (RFC 3339 section 5.6, proleptic Gregorian calendar).
  ///
  /// Always 9 fractional digits and a 4-digit year, so the text sorts like the instant. Every
  /// `Int64` is formatted: ``min`` is `1677-09-21T00:12:43.145224192Z` and ``max`` is
  /// `2262-04-11T23:47:16.854775807Z`.
  ///
  /// - Complexity: O(1).
  public var rfc3339: String {
    let ns = nanosecondsSinceEpoch
    // Floor division, so instants before 1970 get a nonnegative fraction.
    var seconds = ns / 1_000_000_000
    var fraction = ns % 1_000_000_000
    if fraction < 0 {
      seconds -= 1
      fraction += 1_000_000_000
    }
    var days = seconds / 86_400
    var secondOfDay = seconds % 86_400
    if secondOfDay < 0 {
      days -= 1
      secondOfDay += 86_400
    }
    let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
    var text = ""
    text.reserveCapacity(30)
    Self.append(year, width: 4, to: &text)
    text.append("-")
    Self.append(month, width: 2, to: &text)
    text.append("-")
    Self.append(day, width: 2, to: &text)
    text.append("T")
    Self.append(secondOfDay / 3600, width: 2, to: &text)
    text.append(":")
    Self.append(secondOfDay / 60 % 60, width: 2, to: &text)
    text.append(":")
    Self.append(secondOfDay % 60, width: 2, to: &text)
    text.append(".")
    Self.append(fraction, width: 9, to: &text)
    text.append("Z")
    return text
  }

  /// Year, month (1–12) and day (1–31) of a day count since 1970-01-01 (H. Hinnant's
  /// `civil_from_days`, proleptic Gregorian).
  static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }

  private static func append(_ value: Int64, width: Int, to text: inout String) {
    let digits = String(value)
    if digits.count < width { text.append(String(repeating: "0", count: width - digits.count)) }
    text.append(digits)
  }
}
