import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Holds `flock(LOCK_EX)` (or `LOCK_SH`) on a file or directory through an open file description
/// of its own (a writer, or a reader, in another process, as far as a store can tell) until
/// ``release()``, or until `bound` has passed: then a watchdog thread releases it, so a test whose
/// code under test waits for the holder fails instead of hanging the run.
///
/// A bound is a safety net or a scripted "the other writer finishes later", never a measure of
/// speed. Complexity: one extra thread, which wakes every 10 ms until the lock is released.
final class HeldFileLock: Sendable {
  private let fd: Int32
  private let released = Atomic<Bool>(false)
  private let releasedByWatchdog = Atomic<Bool>(false)

  /// Takes the lock without waiting for it (the file must exist, and nobody else may hold it
  /// in a mode that excludes this one).
  ///
  /// - Parameters:
  ///   - path: The file (or, with `directory`, the directory) to lock.
  ///   - shared: Whether the lock is shared (`LOCK_SH`) rather than exclusive.
  ///   - directory: Whether `path` is a directory.
  ///   - bound: When the watchdog releases the lock if nothing did before.
  /// - Throws: An expectation failure when the file cannot be opened or locked.
  init(
    _ path: String, shared: Bool = false, directory: Bool = false,
    releasingAfter bound: Duration = .seconds(60)
  ) throws {
    fd = open(path, (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC)
    try #require(fd >= 0, "opening \(path) to lock it: errno \(errno)")
    let operation = (shared ? LOCK_SH : LOCK_EX) | LOCK_NB
    try #require(flock(fd, operation) == 0, "locking \(path): errno \(errno)")
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
