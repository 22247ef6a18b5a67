extension Syscalls {
  /// The first pause of a bounded lock wait, in nanoseconds (50 µs).
  static let firstLockPause: Int64 = 50_000
  /// The longest pause of a bounded lock wait, in nanoseconds (10 ms).
  static let longestLockPause: Int64 = 10_000_000

  /// `flock(fd, operation)` that waits at most `limit` for another holder, then gives up with
  /// `ETIMEDOUT`: no store operation waits forever behind a process that holds a store's lock and
  /// never lets go (stopped with `SIGSTOP`, hung, or holding it on purpose).
  ///
  /// Tries `operation | LOCK_NB` at once (one `flock` when nobody holds the lock: the cost of a
  /// blocking call). While the lock is taken it pauses and tries again; each pause is about a
  /// tenth of the time already waited (at least 50 µs, at most 10 ms), so a release is noticed
  /// within about a tenth of the wait. The time waited is the larger of `CLOCK_MONOTONIC`'s
  /// progress and the sum of the pauses, so the wait ends even where the monotonic clock does not
  /// move (a frozen clock under libfaketime). Never blocks inside `flock(2)`.
  ///
  /// - Parameters:
  ///   - fd: The lock file's descriptor.
  ///   - operation: ``LockOperation/shared`` or ``LockOperation/exclusive`` (`LOCK_NB` is added).
  ///   - limit: How long to wait; zero or less tries once.
  /// - Throws: ``Errno``: ``Errno/timedOut`` when the lock was still taken at the limit, or the
  ///   error of a `flock` that failed otherwise.
  /// - Complexity: One `flock` when the lock is free; else one `nanosleep` and one `flock` per
  ///   try: about 65 tries in the first 100 ms of a wait, then 100 a second.
  public func flock(_ fd: FileDescriptor, _ operation: LockOperation, waitingAtMost limit: Duration)
    throws(Errno)
  {
    let tryOnce = operation.nonBlocking
    do throws(Errno) {
      try flock(fd, tryOnce)
      return
    } catch {
      guard error == .wouldBlock else { throw error }
    }
    let limitNanoseconds = limit > .zero ? (limit.exactNanoseconds ?? .max) : 0
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
