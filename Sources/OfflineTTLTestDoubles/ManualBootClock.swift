import OfflineTTL
import Synchronization

/// A boot clock that tests set by hand: advance it, move it *backward* (which a real boot clock
/// never does), reboot it with a new boot id and uptime, or make it unavailable. Safe to share
/// across threads.
///
/// ```swift
/// let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(60))
/// boot.advance(by: .seconds(86_400))                                  // a day passes
/// boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(600))   // after a reboot
/// ```
public final class ManualBootClock: BootClock {
  private let current: Mutex<BootClockReading?>

  /// Creates a clock reading `sinceBoot` on boot `bootID`.
  ///
  /// - Parameters:
  ///   - bootID: The current boot.
  ///   - sinceBoot: Time since that boot began.
  public init(bootID: BootID, sinceBoot: Duration = .zero) {
    current = Mutex(BootClockReading(bootID: bootID, sinceBoot: sinceBoot))
  }

  /// The reading it was last set to, or `nil` while ``makeUnavailable()`` is in effect.
  public func now() -> BootClockReading? { current.withLock { $0 } }

  /// Sets any reading, or `nil` for a device without a boot clock.
  ///
  /// - Parameter reading: The new reading.
  public func set(_ reading: BootClockReading?) { current.withLock { $0 = reading } }

  /// Moves the clock forward on the same boot (backward for a negative duration).
  ///
  /// - Parameter duration: How far to move it. Does nothing while unavailable.
  public func advance(by duration: Duration) {
    current.withLock { reading in
      guard let old = reading else { return }
      reading = BootClockReading(bootID: old.bootID, sinceBoot: old.sinceBoot + duration)
    }
  }

  /// Moves the clock backward on the same boot id: a fault a real boot clock never shows, which
  /// the floor must treat as untrustworthy.
  ///
  /// - Parameter duration: How far back to move it.
  public func moveBack(by duration: Duration) { advance(by: .zero - duration) }

  /// A reboot: a new boot id and the time since that boot began.
  ///
  /// - Parameters:
  ///   - bootID: The new boot's id.
  ///   - uptime: Time since the new boot began.
  public func reboot(into bootID: BootID, uptime: Duration) {
    set(BootClockReading(bootID: bootID, sinceBoot: uptime))
  }

  /// Makes ``now()`` return `nil`, as on a device with no readable boot clock.
  public func makeUnavailable() { set(nil) }
}
