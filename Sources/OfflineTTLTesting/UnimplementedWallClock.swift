import OfflineTTL
import Testing

/// A wall clock that must never be read: reading it records a test failure (Swift Testing's
/// `Issue.record`) and returns `WallClockInstant.min`. Inject it to prove a path never looks at
/// the time (the shape of pointfreeco/swift-clocks' `UnimplementedClock`).
public struct UnimplementedWallClock: WallClock {
  private let name: String

  /// Creates the clock.
  ///
  /// - Parameter name: Names the clock in the failure message.
  public init(_ name: String = "UnimplementedWallClock") {
    self.name = name
  }

  /// Records a test failure and returns `WallClockInstant.min`.
  public func now() -> WallClockInstant {
    Issue.record("\(name).now() was read, but this path must not look at the wall clock")
    return .min
  }
}
