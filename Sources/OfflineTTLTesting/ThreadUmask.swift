import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc

  /// `unshare(2)`, which Swift's Glibc module does not import (it is declared only under
  /// `_GNU_SOURCE`).
  @_silgen_name("unshare")
  private func threadUnshare(_ flags: Int32) -> Int32
#endif

/// Runs code under a umask of its own without changing the umask of the rest of the process.
///
/// The umask is process-wide, and Swift Testing runs tests in parallel in one process: a test
/// that called `umask(0o777)` would change the modes of every file other tests create meanwhile.
/// On Linux, ``run(umask:timeout:_:)`` starts a new thread that first calls `unshare(CLONE_FS)`, which
/// gives that thread its own copy of the umask (with the working directory and root), then sets
/// the umask there and runs `body` on that thread only; the thread ends afterwards, and its
/// umask with it. `body` must be synchronous and stay on that thread (the library's store
/// operations do).
public enum ThreadUmask {
  /// Whether ``run(umask:timeout:_:)`` can run here (Linux only), for `.enabled(if:)`.
  public static var isSupported: Bool {
    #if os(Linux)
      true
    #else
      false
    #endif
  }

  /// Why ``run(umask:timeout:_:)`` could not run `body`.
  public struct Failure: Error, CustomStringConvertible {
    /// What failed.
    public let description: String
  }

  /// The umask of the process's first thread, read from `/proc/self/status` (`Umask:`) without
  /// changing it, or `nil` where that file has no such line.
  public static func processUmask() -> UInt32? { umask(inStatusFile: "/proc/self/status") }

  /// The umask of the calling thread, read from `/proc/thread-self/status`, or `nil`.
  public static func threadUmask() -> UInt32? { umask(inStatusFile: "/proc/thread-self/status") }

  private static func umask(inStatusFile path: String) -> UInt32? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
      return UInt32(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    }
    return nil
  }

  /// Runs `body` on a new thread whose umask is `mask`; the rest of the process keeps its own.
  ///
  /// - Parameters:
  ///   - mask: The umask for `body`, e.g. `0o777`.
  ///   - timeout: How long to wait for `body`; default 120 seconds, a bound that turns a hang
  ///     into a failure, never a measure of speed. Past it the thread is left running (a thread
  ///     cannot be stopped from outside) and ``Failure`` is thrown.
  ///   - body: Synchronous work; it must not move to another thread.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws, or ``Failure`` when the thread cannot get a umask of its own
  ///   (not Linux, or `unshare(CLONE_FS)` failed) or `body` did not return within `timeout`.
  public static func run<T: Sendable>(
    umask mask: UInt32, timeout: Duration = .seconds(120),
    _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    #if os(Linux)
      let outcome = Outcome<T>()
      let finished = DispatchSemaphore(value: 0)
      let thread = Thread {
        defer { finished.signal() }
        // CLONE_FS (0x200): this thread stops sharing the umask, working directory and root.
        guard threadUnshare(0x200) == 0 else {
          let number = errno
          outcome.value.withLock {
            $0 = .failure(Failure(description: "unshare(CLONE_FS) failed: errno \(number)"))
          }
          return
        }
        _ = Glibc.umask(mode_t(mask))
        outcome.value.withLock { $0 = Result { try body() } }
      }
      thread.start()
      let milliseconds =
        Int(clamping: timeout.components.seconds) &* 1000
        &+ Int(timeout.components.attoseconds / 1_000_000_000_000_000)
      guard finished.wait(timeout: .now() + .milliseconds(max(0, milliseconds))) == .success
      else {
        throw Failure(
          description: "the thread running body under umask 0\(String(mask, radix: 8)) did not"
            + " finish within \(timeout) (left running)")
      }
      guard let result = outcome.value.withLock({ $0 }) else {
        throw Failure(description: "the thread ended without a result")
      }
      return try result.get()
    #else
      throw Failure(description: "a umask of one thread needs Linux (unshare(CLONE_FS))")
    #endif
  }

  /// The result handed from the thread back to the caller.
  private final class Outcome<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
  }
}
