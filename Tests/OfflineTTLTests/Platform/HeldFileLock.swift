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

  /// Whether ``waiterCount()`` can count (`/proc/locks` is readable: Linux).
  static let canCountWaiters: Bool = access("/proc/locks", R_OK) == 0

  /// How many `flock` requests of any process or thread wait for this lock now: the lines of
  /// `/proc/locks` that list a blocked request (`->`) on this file's device and inode. A
  /// request that waits in the kernel (a blocking `flock`) is listed; one that polls
  /// (`LOCK_NB` and pauses) is not.
  ///
  /// - Returns: The count; 0 where `/proc/locks` cannot be read (see ``canCountWaiters``).
  func waiterCount() -> Int {
    var status = stat()
    guard fstat(fd, &status) == 0 else { return 0 }
    // `/proc/locks` names a file `MAJOR:MINOR:INODE`, the device numbers in hexadecimal.
    let device = UInt64(status.st_dev)
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
    let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
    let file =
      String(major, radix: 16).leftPadded(to: 2) + ":"
      + String(minor, radix: 16).leftPadded(to: 2) + ":" + String(status.st_ino)
    let locks = open("/proc/locks", O_RDONLY | O_CLOEXEC)
    guard locks >= 0 else { return 0 }
    defer { close(locks) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = read(locks, &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").count { line in
      let fields = line.split(separator: " ")
      return fields.count > 5 && fields[1] == "->" && fields[2] == "FLOCK"
        && fields.contains { $0 == file }
    }
  }

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

extension String {
  /// The text with `0`s before it up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
