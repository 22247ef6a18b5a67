import OfflineTTL
import Synchronization

/// A wall clock that tests set by hand: it can be set, advanced and *moved backward*, as a user
/// can move a device's clock. Safe to share across threads.
///
/// ```swift
/// let clock = ManualWallClock(try WallClockInstant(secondsSinceEpoch: 1_700_000_000))
/// clock.advance(by: .seconds(3600))
/// clock.moveBack(by: .seconds(86_400))   // a rollback
/// ```
public final class ManualWallClock: WallClock {
  private let current: Mutex<WallClockInstant>

  /// Creates a clock reading `start`.
  public init(_ start: WallClockInstant) {
    current = Mutex(start)
  }

  /// The time it was last set to.
  public func now() -> WallClockInstant { current.withLock { $0 } }

  /// Sets the clock to any instant, earlier or later.
  public func set(_ instant: WallClockInstant) { current.withLock { $0 = instant } }

  /// Moves the clock forward (or backward, for a negative duration), saturating at the
  /// representable range.
  public func advance(by duration: Duration) {
    current.withLock { $0 = $0.saturatingAdvanced(by: duration) }
  }

  /// Moves the clock backward by `duration`, saturating at `WallClockInstant.min`.
  public func moveBack(by duration: Duration) {
    current.withLock { $0 = $0.saturatingAdvanced(by: .zero - duration) }
  }
}
