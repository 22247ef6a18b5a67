#if SecretService
  import CLibSecret
  import OfflineTTL
  import Synchronization

  #if canImport(Glibc)
    import Glibc
  #endif

  /// A `GCancellable` that a watchdog thread cancels when the service stops answering, so that no
  /// libsecret call blocks forever.
  ///
  /// The operation reports each answered call with ``progressed()``; the watchdog fires when a
  /// whole time limit passes with no progress (so between one and two limits after the last
  /// answer), which bounds every call without bounding a long commit of many calls; and, under a
  /// ``SecretServiceBudget``, when the operation's allowance (what the budget had left when it
  /// started) has passed since the watchdog started, whatever the progress.
  ///
  /// The watchdog waits in `poll(2)` on a pipe with a relative timeout, re-measured on
  /// `CLOCK_MONOTONIC` after an interruption. It uses no Dispatch or Swift concurrency timer:
  /// those never fire under libfaketime (their deadlines are computed from the faked clock),
  /// while a relative `poll` timeout is real time.
  final class CallDeadline: @unchecked Sendable {
    // @unchecked: `fired` is written only by the watchdog thread before it ends and read only
    // after `pthread_join`, which orders the two; every other stored property is immutable.

    /// The cancellable to hand to every libsecret call of the operation.
    let cancellable: UnsafeMutablePointer<GCancellable>
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let timeoutNanoseconds: Int64
    /// When the watchdog fires whatever the progress: its start plus the allowance, on the real
    /// monotonic clock (`.max`: never).
    let hardDeadline: Int64
    private var thread = pthread_t()
    fileprivate var fired = false
    private var finished = false
    private let answered = Atomic<Int>(0)

    /// Starts the watchdog.
    ///
    /// - Parameters:
    ///   - timeout: The time limit of silence; positive.
    ///   - allowance: The most the whole operation may take, in nanoseconds from now (a
    ///     budget's remainder), or `nil` for no such limit.
    /// - Throws: `SecretServiceFault` when the eventfd or the thread cannot be created (no call
    ///   is then made: without a watchdog it could block forever).
    init(timeout: Duration, allowance: Int64? = nil) throws(SecretServiceFault) {
      cancellable = g_cancellable_new()
      timeoutNanoseconds = max(timeout.exactNanoseconds ?? .max, 1)
      if let allowance {
        let (end, overflow) = otl_real_monotonic_nanoseconds().addingReportingOverflow(
          max(allowance, 1))
        hardDeadline = overflow ? .max : end
      } else {
        hardDeadline = .max
      }
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else {
        g_object_unref(cancellable)
        throw SecretServiceFault(
          reason: .serviceFailed, duringWrite: false,
          message: "cannot create the watchdog's pipe (errno \(errno))")
      }
      wakeRead = ends[0]
      wakeWrite = ends[1]
      _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC)
      _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
      let context = Unmanaged.passRetained(self).toOpaque()
      let status = pthread_create(&thread, nil, watchdogMain, context)
      guard status == 0 else {
        Unmanaged<CallDeadline>.fromOpaque(context).release()
        close(wakeRead)
        close(wakeWrite)
        g_object_unref(cancellable)
        finished = true
        throw SecretServiceFault(
          reason: .serviceFailed, duringWrite: false,
          message: "cannot start the watchdog thread (error \(status))")
      }
    }

    /// Stops the watchdog, waits for it, and releases the cancellable. Call exactly once, after
    /// the operation's last libsecret call.
    ///
    /// - Returns: Whether the watchdog fired (the calls were cancelled for taking too long).
    @discardableResult
    func finish() -> Bool {
      guard !finished else { return fired }
      finished = true
      var one: UInt8 = 1
      _ = write(wakeWrite, &one, 1)
      pthread_join(thread, nil)
      close(wakeRead)
      close(wakeWrite)
      g_object_unref(cancellable)
      return fired
    }

    /// Records that a call was answered: the watchdog's limit starts again.
    func progressed() {
      answered.add(1, ordering: .relaxed)
    }

    /// Whether the watchdog has fired so far (exact only after ``finish()``; before it, a
    /// cancelled call is recognised by its `G_IO_ERROR_CANCELLED`).
    var hasFired: Bool { g_cancellable_is_cancelled(cancellable) != 0 }

    deinit { precondition(finished, "CallDeadline.finish() was not called") }

    /// The watchdog thread's body.
    fileprivate func watch() {
      var start = Self.monotonicNanoseconds()
      var seen = answered.load(ordering: .relaxed)
      while true {
        let now = Self.monotonicNanoseconds()
        if now >= hardDeadline { break }  // the budget's allowance is used up
        let silence = timeoutNanoseconds - (now - start)
        if silence <= 0 {
          let answeredNow = answered.load(ordering: .relaxed)
          guard answeredNow != seen else { break }  // a whole limit with no answer
          // A call was answered during this limit: allow another.
          seen = answeredNow
          start = now
          continue
        }
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        let wait = min(silence, hardDeadline - now)
        let milliseconds = Int32(clamping: wait / 1_000_000 + 1)
        if poll(&descriptor, 1, milliseconds) > 0 { return }  // the operation finished
        // A timeout or an interruption (EINTR): the loop measures again.
      }
      fired = true
      g_cancellable_cancel(cancellable)
    }

    /// Real elapsed time: `CLOCK_MONOTONIC` by the raw system call, which libfaketime does not
    /// fake (its `clock_gettime` fakes, and can freeze, every clock).
    private static func monotonicNanoseconds() -> Int64 {
      otl_real_monotonic_nanoseconds()
    }
  }

  private func watchdogMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let deadline = Unmanaged<CallDeadline>.fromOpaque(context).takeRetainedValue()
    deadline.watch()
    return nil
  }
#endif
