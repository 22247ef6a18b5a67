extension WallClockInstant {
  /// Reads an RFC 3339 timestamp (RFC 3339 section 5.6, `date-time`), the inverse of
  /// ``rfc3339``: `2026-11-30T04:28:15.123456789Z`, `2026-11-30t05:28:15+01:00`, `1970-01-01T00:00:00Z`.
  ///
  /// The fraction is optional and has 1 to 9 digits (nanoseconds are the finest unit an instant
  /// holds, so a tenth digit is refused rather than rounded away); `T` and `Z` may be lower case;
  /// the offset is `Z` or `±hh:mm` (at most 23:59). Every instant that ``rfc3339`` prints reads
  /// back as itself.
  ///
  /// - Parameter text: The timestamp, with nothing before or after it.
  /// - Throws: ``InvalidValueError`` with code `invalidOption` when `text` is not an RFC 3339
  ///   `date-time` (a wrong shape, a month or day that does not exist, a leap second `60`, which
  ///   nanoseconds since the epoch cannot name), or `outOfRange` when the instant is outside
  ///   ``min`` ... ``max`` (about 1677-09-21 to 2262-04-11).
  /// - Complexity: O(n) in the length of `text`.
  public init(rfc3339 text: String) throws(InvalidValueError) {
    var reader = RFC3339Reader(bytes: Array(text.utf8), text: text)
    self.init(nanosecondsSinceEpoch: try reader.read())
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`), for
  /// years 0...9999.
  static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}

/// A cursor over the bytes of one RFC 3339 `date-time`.
private struct RFC3339Reader {
  let bytes: [UInt8]
  let text: String
  var index = 0

  mutating func read() throws(InvalidValueError) -> Int64 {
    let year = try digits(4, "year")
    try expect(UInt8(ascii: "-"))
    let month = try digits(2, "month")
    try expect(UInt8(ascii: "-"))
    let day = try digits(2, "day")
    try expect(UInt8(ascii: "T"), or: UInt8(ascii: "t"))
    let hour = try digits(2, "hour")
    try expect(UInt8(ascii: ":"))
    let minute = try digits(2, "minute")
    try expect(UInt8(ascii: ":"))
    let second = try digits(2, "second")
    var fraction: Int64 = 0
    if peek() == UInt8(ascii: ".") {
      index += 1
      var count = 0
      while let byte = peek(), Self.isDigit(byte) {
        guard count < 9 else {
          throw malformed("more than nine fractional digits (finer than a nanosecond)")
        }
        fraction = fraction * 10 + Int64(byte - UInt8(ascii: "0"))
        count += 1
        index += 1
      }
      guard count > 0 else { throw malformed("a '.' without fractional digits") }
      for _ in count..<9 { fraction *= 10 }
    }
    var offsetSeconds: Int64 = 0
    switch peek() {
    case UInt8(ascii: "Z"), UInt8(ascii: "z"):
      index += 1
    case UInt8(ascii: "+"), UInt8(ascii: "-"):
      let sign: Int64 = peek() == UInt8(ascii: "-") ? -1 : 1
      index += 1
      let offsetHour = try digits(2, "offset hour")
      try expect(UInt8(ascii: ":"))
      let offsetMinute = try digits(2, "offset minute")
      guard offsetHour <= 23, offsetMinute <= 59 else {
        throw malformed("the offset \(offsetHour):\(offsetMinute) is not a time of day")
      }
      offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
    default:
      throw malformed("no offset: end it with 'Z' or '+hh:mm'")
    }
    guard index == bytes.count else { throw malformed("text after the offset") }
    guard month >= 1, month <= 12 else { throw malformed("month \(month) does not exist") }
    guard day >= 1, day <= Self.daysIn(month: month, year: year) else {
      throw malformed("day \(day) does not exist in month \(month) of \(year)")
    }
    guard hour <= 23, minute <= 59 else {
      throw malformed("\(hour):\(minute) is not a time of day")
    }
    guard second <= 59 else {
      throw malformed(
        second == 60
          ? "a leap second (60) has no count of nanoseconds since the epoch"
          : "second \(second) does not exist")
    }
    // |days| < 3,000,000, so the seconds cannot overflow; the nanoseconds can.
    let days = WallClockInstant.daysSinceEpoch(year: year, month: month, day: day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
    // Before the epoch with a fraction, scale seconds + 1 and subtract the rest of the second:
    // near ``min``, `seconds × 10⁹` alone is below `Int64.min` although the instant is not.
    let borrow = seconds < 0 && fraction > 0
    let (scaled, o1) = (borrow ? seconds + 1 : seconds).multipliedReportingOverflow(
      by: 1_000_000_000)
    let (total, o2) = scaled.addingReportingOverflow(borrow ? fraction - 1_000_000_000 : fraction)
    guard !o1, !o2 else {
      throw InvalidValueError(
        .outOfRange,
        "'\(text)' is outside the range of an instant "
          + "(\(WallClockInstant.min.rfc3339) ... \(WallClockInstant.max.rfc3339))")
    }
    return total
  }

  static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

  mutating func digits(_ count: Int, _ field: String) throws(InvalidValueError) -> Int64 {
    var value: Int64 = 0
    for _ in 0..<count {
      guard let byte = peek(), Self.isDigit(byte) else {
        throw malformed("the \(field) must be \(count) digits")
      }
      value = value * 10 + Int64(byte - UInt8(ascii: "0"))
      index += 1
    }
    return value
  }

  mutating func expect(_ byte: UInt8, or other: UInt8? = nil) throws(InvalidValueError) {
    guard let next = peek(), next == byte || next == other else {
      throw malformed("expected '\(Character(Unicode.Scalar(byte)))' at byte \(index + 1)")
    }
    index += 1
  }

  func malformed(_ why: String) -> InvalidValueError {
    InvalidValueError(
      .invalidOption,
      "'\(text)' is not an RFC 3339 timestamp such as 2026-11-30T04:28:15.123456789Z: \(why)")
  }
}
