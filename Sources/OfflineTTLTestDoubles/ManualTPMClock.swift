import OfflineTTL
import Synchronization

/// A TPM clock that tests drive by hand, with the TPM's own life cycle: time passing, an orderly
/// reboot, a power loss (the clock falls back to its last NV save and reads unsafe), a clear (a
/// new identity, counters and clock from zero), and a TPM that cannot be reached. Safe to share
/// across threads.
///
/// ```swift
/// let tpm = ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(100))
/// tpm.advance(by: .seconds(600))          // powered for ten minutes
/// tpm.orderlyRestart()                     // TPM2_Shutdown, reboot: the clock continues
/// tpm.powerLoss(fallBack: .seconds(30))    // killed: back to its last save, safe = NO
/// ```
public final class ManualTPMClock: TPMClock {
  private struct State {
    var reading: TPMClockReading
    var unavailable: TPMClockError?
  }
  private let state: Mutex<State>

  /// Creates a TPM reading `clock`, reset count 1, restart count 0, safe.
  ///
  /// - Parameters:
  ///   - identity: The TPM's identity.
  ///   - clock: Its clock, whole milliseconds.
  public init(identity: TPMIdentity, clock: Duration = .zero) {
    state = Mutex(
      State(
        reading: TPMClockReading(
          identity: identity, clockMilliseconds: Self.milliseconds(clock), resetCount: 1,
          restartCount: 0, isSafe: true),
        unavailable: nil))
  }

  /// The current reading.
  ///
  /// - Throws: The error set by ``makeUnavailable(_:)``.
  public func now() throws(TPMClockError) -> TPMClockReading {
    let (reading, error) = state.withLock { ($0.reading, $0.unavailable) }
    if let error { throw error }
    return reading
  }

  /// The reading, ignoring unavailability (for assertions).
  public var reading: TPMClockReading { state.withLock { $0.reading } }

  /// Sets any reading.
  public func set(_ reading: TPMClockReading) { state.withLock { $0.reading = reading } }

  /// The TPM is powered for `duration` more (whole milliseconds).
  public func advance(by duration: Duration) {
    state.withLock { $0.reading.clockMilliseconds &+= Self.milliseconds(duration) }
  }

  /// An orderly `TPM2_Shutdown` and restart: the reset count rises, the clock continues, safe.
  public func orderlyRestart() {
    state.withLock {
      $0.reading.resetCount &+= 1
      $0.reading.restartCount = 0
      $0.reading.isSafe = true
    }
  }

  /// Power lost without a shutdown: the clock falls back by `fallBack` (to its last NV save),
  /// the reset count rises, and the reading is unsafe.
  public func powerLoss(fallBack: Duration) {
    state.withLock {
      let back = Self.milliseconds(fallBack)
      let clock = $0.reading.clockMilliseconds
      $0.reading.clockMilliseconds = clock >= back ? clock - back : 0
      $0.reading.resetCount &+= 1
      $0.reading.restartCount = 0
      $0.reading.isSafe = false
    }
  }

  /// `TPM2_Clear`: a new identity, clock and counters from zero.
  public func clear(newIdentity: TPMIdentity) {
    state.withLock {
      $0.reading = TPMClockReading(
        identity: newIdentity, clockMilliseconds: 0, resetCount: 0, restartCount: 0,
        isSafe: true)
    }
  }

  /// Makes ``now()`` throw `error` (by default `tpm_unavailable`), or reachable again with `nil`.
  public func makeUnavailable(
    _ error: TPMClockError? = TPMClockError(code: .tpmUnavailable, reason: "no TPM (test)")
  ) {
    state.withLock { $0.unavailable = error }
  }

  private static func milliseconds(_ duration: Duration) -> UInt64 {
    UInt64(clamping: duration.saturatingNonnegativeNanoseconds / 1_000_000)
  }
}
