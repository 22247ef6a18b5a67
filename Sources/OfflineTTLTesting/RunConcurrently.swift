import Foundation
import Synchronization

/// Runs `count` closures at the same time, each on its own thread, and waits for all of them.
///
/// Unlike `DispatchQueue.concurrentPerform`, which runs at most one iteration per core at a time
/// (two on a 2-core machine), every one here is a real thread that starts together with the
/// others, so contention tests contend even on small machines.
///
/// - Parameters:
///   - count: How many threads.
///   - body: The work of thread `index` (0..<count).
public func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let started = Mutex(0)
  let finished = DispatchGroup()
  for index in 0..<count {
    finished.enter()
    let thread = Thread {
      // A start barrier: nobody begins before every thread exists.
      started.withLock { $0 += 1 }
      while started.withLock({ $0 }) < count { usleep(100) }
      body(index)
      finished.leave()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  finished.wait()
}
