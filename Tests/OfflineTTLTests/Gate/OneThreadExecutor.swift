import Foundation
import Synchronization

/// A task executor with one thread of its own, which no other test shares: a task that prefers
/// it (`Task(executorPreference:)`, and the child tasks of its groups) runs there and nowhere
/// else. A test that asks "does this async call leave its thread free?" runs the calls and a
/// sentinel here: the answer then does not depend on how busy the shared cooperative pool is
/// (the rest of the suite runs there, and may keep a ready task waiting for a long time).
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
  // `@unchecked`: `jobs` and `stopped` are touched only under `condition`.
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopped = false

  init() {
    let thread = Thread { [self] in run() }
    thread.name = "OneThreadExecutor"
    thread.start()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }

  /// Ends the thread once the jobs enqueued so far have run.
  func stop() {
    condition.lock()
    stopped = true
    condition.signal()
    condition.unlock()
  }

  private func run() {
    while true {
      condition.lock()
      while jobs.isEmpty && !stopped { condition.wait() }
      if jobs.isEmpty {
        condition.unlock()
        return
      }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
