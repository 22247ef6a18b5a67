import Foundation
import Synchronization
import Testing

/// Runs `count` closures at the same time, each on its own thread, and waits for all of them, at
/// most `timeout`.
///
/// Unlike `DispatchQueue.concurrentPerform`, which runs at most one iteration per core at a time
/// (two on a 2-core machine), every one here is a real thread that starts together with the
/// others, so contention tests contend even on small machines.
///
/// A thread that has not finished when `timeout` passes is a test failure naming it (an issue
/// recorded at the caller's line), and the call returns without it: a hang fails the test
/// instead of stalling the run. Such a thread is left running (a thread cannot be stopped from
/// outside), so `body` must not touch anything the caller frees.
///
/// - Parameters:
///   - count: How many threads.
///   - timeout: How long to wait for all of them; default 300 seconds, a bound that turns a
///     hang into a failure, never a measure of speed.
///   - sourceLocation: Where a timeout is recorded.
///   - body: The work of thread `index` (0..<count).
/// - Returns: The indexes of the threads that had not finished at the limit (empty when all
///   finished).
@discardableResult
public func runConcurrently(
  _ count: Int, timeout: Duration = .seconds(300),
  sourceLocation: SourceLocation = #_sourceLocation,
  _ body: @escaping @Sendable (Int) -> Void
) -> [Int] {
  let started = Mutex(0)
  let running = Mutex(Set(0..<count))
  let finished = DispatchGroup()
  for index in 0..<count {
    finished.enter()
    let thread = Thread {
      // A start barrier: nobody begins before every thread exists.
      started.withLock { $0 += 1 }
      while started.withLock({ $0 }) < count { usleep(100) }
      body(index)
      running.withLock { _ = $0.remove(index) }
      finished.leave()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  let milliseconds =
    Int(clamping: timeout.components.seconds) &* 1000
    &+ Int(timeout.components.attoseconds / 1_000_000_000_000_000)
  guard finished.wait(timeout: .now() + .milliseconds(max(0, milliseconds))) == .timedOut else {
    return []
  }
  let hung = running.withLock { $0.sorted() }
  let message =
    "runConcurrently: thread(s) \(hung) of \(count) did not finish within \(timeout) (left"
    + " running)"
  Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
  return hung
}
