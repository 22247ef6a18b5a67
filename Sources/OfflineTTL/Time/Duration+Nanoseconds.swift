extension Duration {
  /// The duration in whole nanoseconds (sub-nanosecond parts truncated toward zero), or `nil`
  /// when it does not fit in `Int64` (beyond about ±292 years).
  public var exactNanoseconds: Int64? {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return nil }
    let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    return overflow2 ? nil : total
  }

  /// The duration in whole nanoseconds, clamped to `0...UInt64.max` (negative durations give 0,
  /// durations beyond about 584 years give `UInt64.max`). Sub-nanosecond parts are truncated.
  public var saturatingNonnegativeNanoseconds: UInt64 {
    let (seconds, attoseconds) = components
    guard self > .zero else { return 0 }
    let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return .max }
    let (total, overflow2) = scaled.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
    return overflow2 ? .max : total
  }
}
