import Foundation

/// An instant on the wall clock: whole nanoseconds since the Unix epoch (1970-01-01T00:00:00Z).
///
/// The wall clock is the settable calendar clock (`CLOCK_REALTIME`, `Date()`): the only clock that
/// survives a reboot, and the one a user can move. Every timestamp in OfflineTTL is this typed
/// value, never a bare `Double` or an untyped integer, so seconds, milliseconds and nanoseconds
/// cannot be mixed by accident (<doc:Rules#Typed-time>).
///
/// The range is that of `Int64` nanoseconds: about 1677-09-21 to 2262-04-11. Constructors from
/// coarser units are exact and throw ``InvalidValueError`` when the value does not fit, rather than
/// trapping or wrapping.
public struct WallClockInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// Nanoseconds since the Unix epoch; negative values are before 1970.
  public var nanosecondsSinceEpoch: Int64

  /// Creates an instant from whole nanoseconds since the Unix epoch. Every `Int64` is valid.
  ///
  /// - Parameter nanosecondsSinceEpoch: Nanoseconds since 1970-01-01T00:00:00Z.
  @inlinable
  public init(nanosecondsSinceEpoch: Int64) {
    self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
  }

  /// The earliest representable instant (`Int64.min` nanoseconds).
  public static let min = WallClockInstant(nanosecondsSinceEpoch: .min)
  /// The latest representable instant (`Int64.max` nanoseconds).
  public static let max = WallClockInstant(nanosecondsSinceEpoch: .max)

  @inlinable
  public static func < (lhs: WallClockInstant, rhs: WallClockInstant) -> Bool {
    lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
  }

  /// The nanosecond count, for logs: `"1700000000000000000ns"`. Use ``rfc3339`` for people.
  public var description: String { "\(nanosecondsSinceEpoch)ns" }
}

extension WallClockInstant {
  /// Creates an instant from whole seconds since the Unix epoch, exactly.
  ///
  /// - Parameter seconds: Seconds since 1970-01-01T00:00:00Z.
  /// - Throws: ``InvalidValueError`` with code `outOfRange` when `seconds × 10⁹` does not fit in
  ///   `Int64` nanoseconds (|seconds| > 9,223,372,036).
  public init(secondsSinceEpoch seconds: Int64) throws(InvalidValueError) {
    self.init(nanosecondsSinceEpoch: try Self.scaled(seconds, by: 1_000_000_000, unit: "s"))
  }

  /// Creates an instant from whole milliseconds since the Unix epoch, exactly.
  ///
  /// - Parameter milliseconds: Milliseconds since 1970-01-01T00:00:00Z.
  /// - Throws: ``InvalidValueError`` with code `outOfRange` when `ms × 10⁶` does not fit in
  ///   `Int64` nanoseconds.
  public init(millisecondsSinceEpoch milliseconds: Int64) throws(InvalidValueError) {
    self.init(nanosecondsSinceEpoch: try Self.scaled(milliseconds, by: 1_000_000, unit: "ms"))
  }

  /// Creates an instant from a count in the given unit, exactly.
  ///
  /// - Parameters:
  ///   - value: The count since the Unix epoch.
  ///   - unit: The unit `value` is in.
  /// - Throws: ``InvalidValueError`` with code `outOfRange` when the value does not fit.
  public init(_ value: Int64, _ unit: TimeUnit) throws(InvalidValueError) {
    self.init(
      nanosecondsSinceEpoch: try Self.scaled(value, by: unit.nanoseconds, unit: unit.symbol))
  }

  /// Creates an instant from a Foundation `Date`, rounded to the nearest nanosecond.
  ///
  /// `Date` stores a `Double` number of seconds, so instants far from 2001 carry less than
  /// nanosecond precision; the conversion rounds rather than truncates.
  ///
  /// - Parameter date: The date to convert.
  /// - Throws: ``InvalidValueError`` with code `outOfRange` when the date is not finite or is
  ///   outside the `Int64` nanosecond range.
  public init(_ date: Date) throws(InvalidValueError) {
    let nanoseconds = (date.timeIntervalSince1970 * 1e9).rounded()
    // 2^63 is exactly representable as a Double; Int64.max is not, so compare with 2^63.
    guard nanoseconds.isFinite, nanoseconds >= -0x1p63, nanoseconds < 0x1p63 else {
      throw InvalidValueError(.outOfRange, "date \(date) is outside the Int64 nanosecond range")
    }
    self.init(nanosecondsSinceEpoch: Int64(nanoseconds))
  }

  /// The instant as a Foundation `Date` (which keeps about microsecond precision today).
  public var date: Date {
    Date(timeIntervalSince1970: Double(nanosecondsSinceEpoch) / 1e9)
  }

  /// The value in the given unit, truncated toward negative infinity (floor), so that a
  /// conversion back never lands after the instant.
  ///
  /// - Parameter unit: The unit to express the instant in.
  /// - Returns: `floor(nanoseconds / unit)`.
  public func count(in unit: TimeUnit) -> Int64 {
    let (q, r) = nanosecondsSinceEpoch.quotientAndRemainder(dividingBy: unit.nanoseconds)
    return r < 0 ? q - 1 : q
  }

  /// The instant moved by a duration, or `nil` when the result is not representable.
  ///
  /// - Parameter duration: The offset; sub-nanosecond parts are truncated toward zero.
  /// - Returns: The shifted instant, or `nil` on overflow (never traps).
  public func advanced(by duration: Duration) -> WallClockInstant? {
    guard let offset = duration.exactNanoseconds else { return nil }
    let (sum, overflow) = nanosecondsSinceEpoch.addingReportingOverflow(offset)
    return overflow ? nil : WallClockInstant(nanosecondsSinceEpoch: sum)
  }

  /// The instant moved by a duration, clamped to ``min`` / ``max`` instead of overflowing.
  ///
  /// - Parameter duration: The offset; sub-nanosecond parts are truncated toward zero.
  /// - Returns: The shifted instant, saturated at the representable range.
  public func saturatingAdvanced(by duration: Duration) -> WallClockInstant {
    if let shifted = advanced(by: duration) { return shifted }
    return duration < .zero ? .min : .max
  }

  /// The signed distance `other − self` as a `Duration`. Never traps: `Duration` holds the
  /// difference of any two `Int64` nanosecond values exactly.
  ///
  /// - Parameter other: The later (or earlier) instant.
  /// - Returns: `other − self`.
  public func duration(to other: WallClockInstant) -> Duration {
    let (difference, overflow) = other.nanosecondsSinceEpoch.subtractingReportingOverflow(
      nanosecondsSinceEpoch)
    if !overflow { return .nanoseconds(difference) }
    // The true difference needs 65 bits: split it into two in-range halves.
    let half = Duration.nanoseconds(other.nanosecondsSinceEpoch / 2 - nanosecondsSinceEpoch / 2)
    let rest = Duration.nanoseconds(other.nanosecondsSinceEpoch % 2 - nanosecondsSinceEpoch % 2)
    return half * 2 + rest
  }

  static func scaled(_ value: Int64, by factor: Int64, unit: String) throws(InvalidValueError)
    -> Int64
  {
    let (product, overflow) = value.multipliedReportingOverflow(by: factor)
    guard !overflow else {
      throw InvalidValueError(
        .outOfRange,
        "\(value)\(unit) does not fit in Int64 nanoseconds since the epoch"
          + " (about years 1677 to 2262)")
    }
    return product
  }
}
