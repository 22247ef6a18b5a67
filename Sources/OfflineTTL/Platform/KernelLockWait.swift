#if os(Linux)
  import Glibc

  /// A lock wait that the kernel ends: the calling thread blocks in `flock(2)`, and two POSIX
  /// timers on `CLOCK_MONOTONIC` (kernel time, which libfaketime does not move or freeze) bound
  /// it. Used by ``Syscalls/flock(_:_:waitingAtMost:)`` on Linux; where it cannot be used (see
  /// ``unavailability``) that wait polls instead.
  ///
  /// - The *stopwatch* (`SIGEV_NONE`, one shot at the limit) never signals; `timer_gettime`
  ///   reads 0 once the limit has passed. It is the only test of "the limit passed", so no clock
  ///   of the process is read (a faked clock that stands still cannot stretch the wait).
  /// - The *kicker* (`SIGEV_THREAD_ID` to the waiting thread, first at the limit, then every
  ///   ``kickPeriod``) sends ``signalNumber``, whose handler does nothing and is installed
  ///   without `SA_RESTART`, so the blocked `flock` returns `EINTR`. It keeps kicking after the
  ///   limit, so a kick that lands just before the thread enters `flock` (stopped or preempted
  ///   between two calls) is followed by another.
  ///
  /// A `flock` interrupted before the limit (another signal without `SA_RESTART`) is simply made
  /// again for the time left. ``end()`` deletes both timers; a kick still pending for the thread
  /// is delivered to the empty handler at the latest when `timer_delete` returns (the signal is
  /// not blocked in the thread), so none outlives the wait.
  ///
  /// A thread that blocks the signal waits this way only inside ``withSignalUnblocked(_:)``
  /// (the gate's `async` variants run their store work in it); elsewhere it polls.
  struct KernelLockWait {
    /// The realtime signal that interrupts a waiting `flock`: `SIGRTMIN + 7` (41 with glibc).
    /// Not `SIGRTMAX`, which valgrind takes for itself.
    static let signalNumber: Int32 = __libc_current_sigrtmin() + 7
    /// How often the kicker signals once the limit has passed, in nanoseconds (1 ms).
    static let kickPeriod: Int64 = 1_000_000

    private let stopwatch: timer_t?
    private let kicker: timer_t?

    /// Why a wait on the calling thread cannot be ended by the kernel, or `nil` when it can:
    /// the handler could not be installed (the signal has a handler of someone else's, or
    /// `gettid` is missing), someone replaced it since, or the thread blocks the signal (every
    /// Dispatch worker thread, hence Swift concurrency's tasks, blocks all but a few signals).
    /// Two system calls (`rt_sigaction`, `rt_sigprocmask`); the handler is installed on the
    /// first call of the process (thread-safe, once).
    static var unavailability: String? {
      guard let setup = Self.setup else { return Self.setupFailure }
      var current = sigaction()
      guard sigaction(signalNumber, nil, &current) == 0,
        Self.isOwnHandler(current, own: setup.handler)
      else { return "signal \(signalNumber) has another handler" }
      var mask = sigset_t()
      guard pthread_sigmask(SIG_BLOCK, nil, &mask) == 0, sigismember(&mask, signalNumber) == 0
      else { return "signal \(signalNumber) is blocked in this thread" }
      return nil
    }

    /// Runs `body` with ``signalNumber`` unblocked on the calling thread, then blocks it again
    /// if it was blocked: so a thread that blocks every signal (a Dispatch worker) can wait in
    /// the kernel for the length of one piece of store work. Only once the handler is installed
    /// (installing it here on first use); otherwise `body` runs with the mask as it is. Two
    /// system calls (`rt_sigprocmask`) where the signal was blocked, one where it was not.
    ///
    /// - Parameter body: The store work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw.
    static func withSignalUnblocked<Value, Failure: Error>(
      _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
      guard setup != nil else { return try body() }
      var only = sigset_t()
      sigemptyset(&only)
      sigaddset(&only, signalNumber)
      var previous = sigset_t()
      guard pthread_sigmask(SIG_UNBLOCK, &only, &previous) == 0 else { return try body() }
      defer {
        if sigismember(&previous, signalNumber) == 1 { pthread_sigmask(SIG_BLOCK, &only, nil) }
      }
      return try body()
    }

    /// The calling thread's kernel id (`gettid`), the value both timers of its waits carry;
    /// `nil` where the wait cannot be set up.
    static var currentThreadID: pid_t? { setup?.threadID() }

    /// Whether `action` is the handler this wait installs: `handler`, without `SA_RESTART`
    /// (which would restart the `flock` instead of ending it) and without `SA_SIGINFO`.
    static func isOwnHandler(_ action: sigaction, own handler: SignalHandler) -> Bool {
      let installed = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
      return installed == unsafeBitCast(handler, to: Int.self)
        && action.sa_flags & (Int32(SA_RESTART) | Int32(SA_SIGINFO)) == 0
    }

    /// Whether the handler may be installed over `action`: only over the default action
    /// (`SIG_DFL`, no `SA_SIGINFO` handler); a handler or `SIG_IGN` of someone else is left alone.
    static func mayInstall(over action: sigaction) -> Bool {
      unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 0
    }

    /// Starts the timers for a wait of `limit` nanoseconds on the calling thread; `nil` when
    /// ``unavailability`` names a reason or a timer cannot be made (`EAGAIN` from the kernel's
    /// limit on pending signals, for one): the caller then polls. Six system calls.
    ///
    /// - Parameter limit: How long the wait may last, in nanoseconds; positive.
    init?(limitNanoseconds limit: Int64) {
      guard Self.unavailability == nil, let setup = Self.setup else { return nil }
      let first = Self.timespec(nanoseconds: limit)
      let thread = setup.threadID()
      // Both timers carry the thread's id as their value (`/proc/self/timers` shows it), so a
      // test can tell this thread's timers from those of other waits in the process.
      let tag = UnsafeMutableRawPointer(bitPattern: Int(thread))
      var silent = sigevent()
      silent.sigev_notify = Int32(SIGEV_NONE)
      silent.sigev_value.sival_ptr = tag
      guard let stopwatch = Self.timer(&silent, first: first, then: .init()) else { return nil }
      var kick = sigevent()
      kick.sigev_notify = Int32(SIGEV_THREAD_ID)
      kick.sigev_signo = Self.signalNumber
      kick.sigev_value.sival_ptr = tag
      kick._sigev_un._tid = thread
      guard
        let kicker = Self.timer(
          &kick, first: first, then: Self.timespec(nanoseconds: Self.kickPeriod))
      else {
        timer_delete(stopwatch.id)
        return nil
      }
      self.stopwatch = stopwatch.id
      self.kicker = kicker.id
    }

    /// Whether the limit has passed (the stopwatch reads 0; also when it cannot be read, so
    /// the wait ends rather than going on). One `timer_gettime`.
    var hasExpired: Bool {
      var current = itimerspec()
      guard timer_gettime(stopwatch, &current) == 0 else { return true }
      return current.it_value.tv_sec == 0 && current.it_value.tv_nsec == 0
    }

    /// Deletes both timers. Call it on every exit of the wait (a `defer`).
    func end() {
      timer_delete(kicker)
      timer_delete(stopwatch)
    }

    // MARK: Set-up, once per process

    typealias SignalHandler = @convention(c) (Int32) -> Void

    /// `@unchecked Sendable`: two C function pointers, never changed after the set-up.
    private struct Setup: @unchecked Sendable {
      let handler: SignalHandler
      let threadID: @convention(c) () -> pid_t
    }

    /// The empty handler (async-signal-safe: it does nothing) and `gettid`, once the handler is
    /// installed; `nil` when it could not be.
    private static let setup: Setup? = {
      // `gettid` is declared only with `_GNU_SOURCE`, which the Glibc module is not built with.
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "gettid") else {
        return nil
      }
      let handler: SignalHandler = { _ in }
      var current = sigaction()
      guard sigaction(signalNumber, nil, &current) == 0 else { return nil }
      if !isOwnHandler(current, own: handler) {
        guard mayInstall(over: current) else { return nil }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        guard sigaction(signalNumber, &action, nil) == 0 else { return nil }
      }
      return Setup(
        handler: handler, threadID: unsafeBitCast(symbol, to: (@convention(c) () -> pid_t).self))
    }()

    private static var setupFailure: String {
      "signal \(signalNumber) has another handler, or gettid is missing"
    }

    private static func timespec(nanoseconds: Int64) -> Glibc.timespec {
      Glibc.timespec(
        tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }

    /// A new `CLOCK_MONOTONIC` timer for `event`, armed relative to now; `nil` when it cannot be
    /// made or armed (nothing is left behind).
    private static func timer(
      _ event: inout sigevent, first: Glibc.timespec, then interval: Glibc.timespec
    ) -> TimerID? {
      var id: timer_t? = nil
      guard timer_create(CLOCK_MONOTONIC, &event, &id) == 0 else { return nil }
      var setting = itimerspec(it_interval: interval, it_value: first)
      guard timer_settime(id, 0, &setting, nil) == 0 else {
        timer_delete(id)
        return nil
      }
      return TimerID(id: id)
    }

    /// A timer's id. It may be 0, which Swift sees as a `nil` pointer: only the return codes of
    /// `timer_create` and `timer_settime` tell whether there is a timer.
    private struct TimerID {
      let id: timer_t?
    }
  }
#endif
