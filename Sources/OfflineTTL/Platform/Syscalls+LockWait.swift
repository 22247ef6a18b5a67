#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Syscalls {
  /// The first pause of a polled lock wait, in nanoseconds (50 µs).
  static let firstLockPause: Int64 = 50_000
  /// The longest pause of a polled lock wait, in nanoseconds (10 ms).
  static let longestLockPause: Int64 = 10_000_000

  /// `flock(fd, operation)` that waits at most `limit` for another holder, then gives up with
  /// `ETIMEDOUT`: no store operation waits forever behind a process that holds a store's lock and
  /// never lets go (stopped with `SIGSTOP`, hung, or holding it on purpose).
  ///
  /// Tries `operation | LOCK_NB` at once (one `flock` when nobody holds the lock: the cost of a
  /// blocking call). While the lock is taken:
  /// - **On Linux, the kernel waits** (`KernelLockWait`): a blocking `flock`, which the kernel
  ///   wakes when the holder releases the lock, ended at the limit by a timer signal to this
  ///   thread (`EINTR`). The limit is kept by `CLOCK_MONOTONIC` timers in the kernel, so a
  ///   clock that libfaketime freezes or moves does not change it; a `flock` interrupted by
  ///   another signal is made again for the time left. The process gets a handler that does
  ///   nothing for one realtime signal (`SIGRTMIN + 7`) the first time a wait starts.
  /// - **Otherwise it polls**: where that signal has a handler of someone else's, where this
  ///   thread blocks it (every Dispatch worker thread, so Swift concurrency's tasks, except
  ///   inside ``allowingKernelLockWaits(_:)``, where the gate's `async` variants run), where no
  ///   timer can be made, and on other systems. It pauses and tries `LOCK_NB` again; each pause
  ///   is about a tenth of the time already waited (at least 50 µs, at most 10 ms). The time
  ///   waited is the larger of `CLOCK_MONOTONIC`'s progress and the sum of the pauses, so the
  ///   wait ends where that clock does not move.
  ///
  /// Polling is the slower way under contention: a waiter that sleeps takes the lock later than
  /// one the kernel wakes at the release, and while writers hand the lock on to each other it
  /// may seldom find it free (seconds of waiting, measured, behind eight writers).
  ///
  /// - Parameters:
  ///   - fd: The lock file's descriptor.
  ///   - operation: ``LockOperation/shared`` or ``LockOperation/exclusive``.
  ///   - limit: How long to wait; zero or less tries once.
  /// - Throws: ``Errno``: ``Errno/timedOut`` when the lock was still taken at the limit, or the
  ///   error of a `flock` that failed otherwise.
  /// - Complexity: One `flock` when the lock is free. Waiting in the kernel: one blocking
  ///   `flock` (one more after each interruption by another signal), and 9 system calls for the
  ///   timers and the signal checks. Polling: one `nanosleep` and one `flock` per try, about 65
  ///   tries in the first 100 ms of a wait, then 100 a second.
  public func flock(_ fd: FileDescriptor, _ operation: LockOperation, waitingAtMost limit: Duration)
    throws(Errno)
  {
    do throws(Errno) {
      try flock(fd, operation.nonBlocking)
      return
    } catch {
      guard error == .wouldBlock else { throw error }
    }
    let limitNanoseconds = limit > .zero ? (limit.exactNanoseconds ?? .max) : 0
    guard limitNanoseconds > 0 else { throw Errno.timedOut }
    #if os(Linux)
      if let wait = KernelLockWait(limitNanoseconds: limitNanoseconds) {
        defer { wait.end() }
        let blocking = LockOperation(rawValue: operation.rawValue & ~LOCK_NB)
        while true {
          do throws(Errno) {
            try flockReportingInterrupts(fd, blocking)
            return
          } catch {
            guard error == .interrupted else { throw error }
            if wait.hasExpired { throw Errno.timedOut }
          }
        }
      }
    #endif
    try pollForLock(fd, operation, limitNanoseconds: limitNanoseconds)
  }

  /// Runs `body` so that its lock waits (``flock(_:_:waitingAtMost:)``) wait in the kernel even
  /// on a thread that blocks every signal, such as a Dispatch worker: on Linux the lock-wait
  /// signal is unblocked on the calling thread for the length of `body` and blocked again after
  /// if it was. Elsewhere `body` simply runs.
  ///
  /// - Parameter body: The store work.
  /// - Returns: What `body` returned.
  /// - Throws: What `body` threw.
  /// - Complexity: `body`, plus at most two `rt_sigprocmask` calls.
  static func allowingKernelLockWaits<Value, Failure: Error>(
    _ body: () throws(Failure) -> Value
  ) throws(Failure) -> Value {
    #if os(Linux)
      return try KernelLockWait.withSignalUnblocked(body)
    #else
      return try body()
    #endif
  }

  /// The polled wait of ``flock(_:_:waitingAtMost:)``, after a first try found the lock taken.
  ///
  /// - Parameters:
  ///   - fd: The lock file's descriptor.
  ///   - operation: ``LockOperation/shared`` or ``LockOperation/exclusive`` (`LOCK_NB` is added).
  ///   - limitNanoseconds: How long to wait, in nanoseconds; positive.
  /// - Throws: ``Errno/timedOut`` at the limit, or the error of a `flock` that failed otherwise.
  func pollForLock(_ fd: FileDescriptor, _ operation: LockOperation, limitNanoseconds: Int64)
    throws(Errno)
  {
    let tryOnce = operation.nonBlocking
    let start = monotonicNanoseconds()
    var slept: Int64 = 0
    while true {
      let elapsed = max(slept, monotonicNanoseconds() &- start)
      guard elapsed < limitNanoseconds else { throw Errno.timedOut }
      let pause = min(
        max(Self.firstLockPause, elapsed / 10), Self.longestLockPause, limitNanoseconds - elapsed)
      self.pause(nanoseconds: pause)
      slept += pause
      do throws(Errno) {
        try flock(fd, tryOnce)
        return
      } catch {
        guard error == .wouldBlock else { throw error }
      }
    }
  }
}
