import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Holds `flock(LOCK_EX)` on a file through an open file description of its own (a writer in
/// another process, as far as a store can tell) until ``release()``, or until `bound` has passed:
/// then a watchdog thread releases it, so a test whose code under test waits for the holder fails
/// instead of hanging the run.
///
/// A bound is a safety net or a scripted "the other writer finishes later", never a measure of
/// speed. Complexity: one extra thread, which wakes every 10 ms until the lock is released.
final class HeldFileLock: Sendable {
  private let fd: Int32
  private let released = Atomic<Bool>(false)
  private let releasedByWatchdog = Atomic<Bool>(false)

  /// Takes the lock, waiting for it (the file must exist).
  ///
  /// - Parameters:
  ///   - path: The file to lock.
  ///   - bound: When the watchdog releases the lock if nothing did before.
  /// - Throws: An expectation failure when the file cannot be opened or locked.
  init(_ path: String, releasingAfter bound: Duration = .seconds(60)) throws {
    fd = open(path, O_RDONLY | O_CLOEXEC)
    try #require(fd >= 0, "opening \(path) to lock it: errno \(errno)")
    try #require(flock(fd, LOCK_EX) == 0, "locking \(path): errno \(errno)")
    let deadline = ContinuousClock.now + bound
    Thread { [self] in
      while !isReleased {
        guard ContinuousClock.now < deadline else {
          if releaseNow() { releasedByWatchdog.store(true, ordering: .releasing) }
          return
        }
        usleep(10_000)
      }
    }.start()
  }

  /// Whether the lock was released, by ``release()`` or by the watchdog.
  var isReleased: Bool { released.load(ordering: .acquiring) }

  /// Whether the watchdog released the lock because `bound` passed first.
  var wasReleasedByWatchdog: Bool { releasedByWatchdog.load(ordering: .acquiring) }

  /// Releases the lock now.
  ///
  /// - Returns: `false` when it was already released (by the watchdog, or an earlier call).
  @discardableResult func release() -> Bool { releaseNow() }

  private func releaseNow() -> Bool {
    guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return false }
    flock(fd, LOCK_UN)
    return true
  }

  deinit { close(fd) }
}
