import OfflineTTL

extension TimeUnit {
  /// The unit for a `--unit` value: `s`, `ms` or `ns`.
  ///
  /// - Throws: ``UsageError`` for any other value.
  static func commandLine(_ text: String, option: String = "unit") throws(UsageError) -> TimeUnit {
    guard let unit = TimeUnit(rawValue: text) else {
      let symbols = TimeUnit.allCases.map(\.symbol).joined(separator: ", ")
      throw UsageError("--\(option): '\(text)' is not a unit (use one of \(symbols))")
    }
    return unit
  }

  /// The instant `count` units after the Unix epoch, exactly.
  ///
  /// - Throws: ``UsageError`` naming the option when it does not fit in `Int64` nanoseconds.
  func instant(_ count: Int64, option: String) throws(UsageError) -> WallClockInstant {
    do {
      return try WallClockInstant(count, self)
    } catch {
      throw UsageError("--\(option): \(error.reason)")
    }
  }

  /// A max age of `count` units, when it fits in `Int64` nanoseconds (the range of every time the
  /// tool handles: about 292 years), else the reason it does not, naming `name` (`--max-age`,
  /// `max_age`).
  ///
  /// - Returns: The duration, or a message for the caller's usage error.
  func maxAge(_ count: Int64, name: String) -> Result<Duration, MaxAgeRangeError> {
    let (nanoseconds, overflow) = count.multipliedReportingOverflow(by: self.nanoseconds)
    guard !overflow else {
      return .failure(
        MaxAgeRangeError(
          message: "\(name): \(count)\(symbol) does not fit in Int64 nanoseconds (the largest"
            + " max age is \(Int64.max / self.nanoseconds)\(symbol), about 292 years)"))
    }
    return .success(.nanoseconds(nanoseconds))
  }
}

/// A count of a unit too large for a max age (see ``TimeUnit/maxAge(_:name:)``).
struct MaxAgeRangeError: Error {
  let message: String
}
