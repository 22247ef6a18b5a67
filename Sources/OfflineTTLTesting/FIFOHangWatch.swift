import Dispatch
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body` (on the calling thread) while a watchdog thread waits for it at most `bound`;
/// past that, the watchdog opens each of `fifos` from the other end without blocking, again and
/// again until `body` returns, which releases an `open(2)` waiting there for a peer, and the
/// wait is recorded as an issue once `body` returns.
///
/// A bound that turns a hang into a failure, never a measure of speed: an `open` of a FIFO
/// without a peer waits forever, and nothing a store does on a loaded machine takes a minute.
/// Complexity: one extra thread; the watchdog sleeps in one timed wait unless the bound passes.
///
/// - Parameters:
///   - fifos: The FIFOs the code under test must never wait on.
///   - bound: How long `body` may run before the FIFOs are opened for it.
///   - comment: What the issue says when the bound passed.
///   - sourceLocation: Where the issue is recorded.
///   - body: The code under test.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func neverWaitingOn<T>(
  _ fifos: [String], bound: Duration = .seconds(60), _ comment: Comment,
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) rethrows -> T {
  let finished = DispatchSemaphore(value: 0)
  let released = FIFOReleased()
  let watchdog = DispatchSemaphore(value: 0)
  let paths = fifos
  let seconds = Int(bound.components.seconds)
  DispatchQueue.global().async {
    defer { watchdog.signal() }
    guard finished.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
    released.value.withLock { $0 = true }
    repeat {
      for path in paths {
        for flags in [O_WRONLY | O_NONBLOCK, O_RDONLY | O_NONBLOCK] {
          let fd = open(path, flags | O_CLOEXEC)
          if fd >= 0 { close(fd) }
        }
      }
    } while finished.wait(timeout: .now() + .milliseconds(100)) == .timedOut
  }
  defer {
    finished.signal()
    watchdog.wait()
    if released.value.withLock({ $0 }) {
      Issue.record(
        "waited on a FIFO for more than \(bound) (released by opening its other end): \(comment)",
        sourceLocation: sourceLocation)
    }
  }
  return try body()
}

/// Whether ``neverWaitingOn(_:bound:_:sourceLocation:_:)``'s watchdog had to release a FIFO.
private final class FIFOReleased: Sendable {
  let value = Mutex(false)
}
