import OfflineTTL

extension ParsedArguments {
  /// The `--unit` value (`s`, `ms` or `ns`), or `defaultUnit` when it was not given.
  ///
  /// - Throws: ``UsageError`` for an unknown unit.
  func unit(_ name: String = "unit", default defaultUnit: TimeUnit = .seconds) throws(UsageError)
    -> TimeUnit
  {
    guard let text = value(name) else { return defaultUnit }
    return try TimeUnit.commandLine(text, option: name)
  }

  /// `--name` as an integer `Int64`, or `nil` when it was not given.
  ///
  /// - Throws: ``UsageError`` when it is not an integer or out of `Int64` range.
  func int64(_ name: String) throws(UsageError) -> Int64? {
    guard let text = value(name) else { return nil }
    return try IntegerParser.int64(text, option: name)
  }

  /// `--name` as an integer count of `unit` since the epoch, or `nil` when it was not given.
  ///
  /// - Throws: ``UsageError`` when it is not an integer or does not fit in `Int64` nanoseconds.
  func instant(_ name: String, unit: TimeUnit) throws(UsageError) -> WallClockInstant? {
    guard let count = try int64(name) else { return nil }
    return try unit.instant(count, option: name)
  }

  /// Every value of the repeatable `--name` as instants in `unit`, in order.
  ///
  /// - Throws: ``UsageError`` for the first value that is not an integer or does not fit.
  func instants(_ name: String, unit: TimeUnit) throws(UsageError) -> [WallClockInstant] {
    var result: [WallClockInstant] = []
    for text in values(name) {
      result.append(try unit.instant(IntegerParser.int64(text, option: name), option: name))
    }
    return result
  }

  /// `--name` as an integer count of `unit` (any `Int64` count fits a `Duration`), or `nil`.
  ///
  /// - Throws: ``UsageError`` when it is not an integer or out of `Int64` range.
  func integerDuration(_ name: String, unit: TimeUnit) throws(UsageError) -> Duration? {
    guard let count = try int64(name) else { return nil }
    return unit.duration(count)
  }

  /// `--name` as a duration with units (`500ms`, `90s`, `1h30m`, `7d`), or `nil`.
  ///
  /// - Throws: ``UsageError`` for a bare integer, an unknown unit, or a duration too long for
  ///   `Int64` nanoseconds.
  func duration(_ name: String) throws(UsageError) -> Duration? {
    guard let text = value(name) else { return nil }
    do {
      return try DurationParser.parse(text)
    } catch {
      throw UsageError("--\(name): \(error.reason)")
    }
  }
}
