/// A unit for integer times and durations at the edges of the library (the command line, JSON).
///
/// Inside the library every instant is ``WallClockInstant`` (nanoseconds) and every duration is a
/// `Duration`; a `TimeUnit` only says how a bare integer from outside is to be read.
public enum TimeUnit: String, Sendable, CaseIterable {
  /// Seconds (`s`).
  case seconds = "s"
  /// Milliseconds (`ms`).
  case milliseconds = "ms"
  /// Nanoseconds (`ns`).
  case nanoseconds = "ns"

  /// The unit's symbol: `s`, `ms` or `ns`.
  public var symbol: String { rawValue }

  /// Nanoseconds in one unit: 10⁹, 10⁶ or 1.
  public var nanoseconds: Int64 {
    switch self {
    case .seconds: 1_000_000_000
    case .milliseconds: 1_000_000
    case .nanoseconds: 1
    }
  }

  /// A duration of `count` units. Never traps: `Duration` holds any `Int64` count of seconds.
  ///
  /// - Parameter count: The number of units; may be negative.
  /// - Returns: `count` units as a `Duration`.
  public func duration(_ count: Int64) -> Duration {
    switch self {
    case .seconds: .seconds(count)
    case .milliseconds: .milliseconds(count)
    case .nanoseconds: .nanoseconds(count)
    }
  }
}
