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
}
