import OfflineTTL

/// A wall clock that must never be read: reading it reports the read and returns
/// `WallClockInstant.min`. Inject it to prove a path never looks at the time (the shape of
/// pointfreeco/swift-clocks' `UnimplementedClock`).
///
/// This module does not import a test framework, so the report goes where you say: a test
/// framework's failure call, a log, a counter. In Swift Testing, `import OfflineTTLTesting` and
/// use `UnimplementedWallClock(_:)`, which records a test issue.
///
/// ```swift
/// let reads = Mutex(0)
/// let clock = UnimplementedWallClock("login screen") { _ in reads.withLock { $0 += 1 } }
/// ```
public struct UnimplementedWallClock: WallClock {
  private let name: String
  private let report: @Sendable (String) -> Void

  /// Creates the clock.
  ///
  /// - Parameters:
  ///   - name: Names the clock in the report.
  ///   - report: Called on every read with a message naming the clock; it may be called from any
  ///     thread.
  public init(
    _ name: String = "UnimplementedWallClock", report: @escaping @Sendable (String) -> Void
  ) {
    self.name = name
    self.report = report
  }

  /// Reports the read and returns `WallClockInstant.min`.
  public func now() -> WallClockInstant {
    report("\(name).now() was read, but this path must not look at the wall clock")
    return .min
  }
}
