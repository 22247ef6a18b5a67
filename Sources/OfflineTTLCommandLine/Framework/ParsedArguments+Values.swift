import OfflineTTL

extension ParsedArguments {
  /// The `--unit` value (`s`, `ms` or `ns`), or `defaultUnit` when it was not given.
  ///
  /// - Throws: ``UsageError`` for an unknown unit.
  func unit(_ option: OptionSpec = .unit, default defaultUnit: TimeUnit = .seconds)
    throws(UsageError) -> TimeUnit
  {
    guard let text = value(option) else { return defaultUnit }
    return try TimeUnit.commandLine(text, option: option.name)
  }

  /// `--name` as an integer `Int64`, or `nil` when it was not given.
  ///
  /// - Throws: ``UsageError`` when it is not an integer or out of `Int64` range.
  func int64(_ option: OptionSpec) throws(UsageError) -> Int64? {
    guard let text = value(option) else { return nil }
    return try IntegerParser.int64(text, option: option.name)
  }

  /// `--name` as an integer count of `unit` since the epoch, or `nil` when it was not given.
  ///
  /// - Throws: ``UsageError`` when it is not an integer or does not fit in `Int64` nanoseconds.
  func instant(_ option: OptionSpec, unit: TimeUnit) throws(UsageError) -> WallClockInstant? {
    guard let count = try int64(option) else { return nil }
    return try unit.instant(count, option: option.name)
  }

  /// Every value of the repeatable `--name` as instants in `unit`, in order.
  ///
  /// - Throws: ``UsageError`` for the first value that is not an integer or does not fit.
  func instants(_ option: OptionSpec, unit: TimeUnit) throws(UsageError) -> [WallClockInstant] {
    var result: [WallClockInstant] = []
    for text in values(option) {
      result.append(
        try unit.instant(IntegerParser.int64(text, option: option.name), option: option.name))
    }
    return result
  }

  /// `--name` as a duration: with units (`90s`, `7d`, `1h30m`), or a bare integer count of
  /// `unit` (the older spelling scripts use; a negative one is returned for the caller to
  /// reject), or `nil` when it was not given.
  ///
  /// - Throws: ``UsageError`` when it is neither, or when either spelling does not fit in
  ///   `Int64` nanoseconds.
  func durationOrCount(_ option: OptionSpec, unit: TimeUnit) throws(UsageError) -> Duration? {
    guard let text = value(option) else { return nil }
    if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      || text.hasPrefix("-")
    {
      let count = try IntegerParser.int64(text, option: option.name)
      // A negative count is returned for the caller to reject with its own message.
      guard count >= 0 else { return unit.duration(count) }
      switch unit.maxAge(count, name: "--\(option.name)") {
      case .success(let duration): return duration
      case .failure(let error): throw UsageError(error.message)
      }
    }
    return try duration(option)
  }

  /// `--name` as a duration with units (`500ms`, `90s`, `1h30m`, `7d`), or `nil`.
  ///
  /// - Throws: ``UsageError`` for a bare integer, an unknown unit, or a duration too long for
  ///   `Int64` nanoseconds.
  func duration(_ option: OptionSpec) throws(UsageError) -> Duration? {
    guard let text = value(option) else { return nil }
    return try Self.duration(text, option: option.name)
  }

  /// `text` as a duration with units, for `--option`.
  ///
  /// - Throws: ``UsageError`` (`--option: ` and the parser's reason).
  static func duration(_ text: String, option: String) throws(UsageError) -> Duration {
    do {
      return try DurationParser.parse(text)
    } catch {
      throw UsageError("--\(option): \(error.reason)")
    }
  }

  /// Checks that `text` is what ``durationOrCount(_:unit:)`` accepts: a duration with units or
  /// an integer count (of any unit, so only its syntax and `Int64` range are checked here).
  ///
  /// - Throws: ``UsageError`` when it is neither.
  static func checkDurationOrCount(_ text: String, option: String) throws(UsageError) {
    if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      || text.hasPrefix("-")
    {
      _ = try IntegerParser.int64(text, option: option)
    } else {
      _ = try duration(text, option: option)
    }
  }
}
