import OfflineTTLTestDoubles
import Testing

extension UnimplementedWallClock {
  /// Creates a clock whose every read records a test failure (Swift Testing's `Issue.record`).
  ///
  /// - Parameter name: Names the clock in the failure message.
  public init(_ name: String = "UnimplementedWallClock") {
    self.init(name) { message in Issue.record(Comment(rawValue: message)) }
  }
}
