#if TPM
  import CTSS2
  import OfflineTTL
  import Synchronization

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// Runs one clock's TPM work, one command at a time, each under a time limit.
  ///
  /// The TPM Software Stack's calls block: a TCTI connect, a write, or a read of a TPM that
  /// another client holds, or of an endpoint that accepts and never answers, can wait forever,
  /// and a blocked read cannot be cancelled from outside. So each piece of work runs on its own
  /// detached thread while the caller waits for it on a pipe with `poll(2)`, at most until the
  /// deadline. A caller that gives up leaves the thread and the connection it holds behind:
  /// they finish when the TPM answers or the connection breaks (the peer closes or resets it),
  /// and the connection is kept for the next call only if the work left it open.
  ///
  /// At most one piece of work runs per lane, so an ESYS context is never used by two threads
  /// at once, and at most one thread per lane is ever left behind: while work that a caller gave
  /// up on is still running, every later call fails at once with `tpm_timed_out` instead of
  /// starting another thread. Callers that find work still within its limit wait for it, up
  /// to their own deadline.
  final class TPMCommandLane: Sendable {
    private struct State: ~Copyable {
      /// The open connection while no work runs (work takes it and gives it back).
      var connection: Connection?
      /// The work running now, if any.
      var running: Running?
    }

    private struct Running {
      let completion: Completion
      /// Whether a caller gave up on it.
      var abandoned: Bool
      /// What it does, for the error of later callers.
      let what: String
    }

    private let state = Mutex(State())

    /// Runs `work` with this lane's connection on a worker thread; returns its result, or
    /// throws `tpm_timed_out` when it (and any work it waited for) did not end within `limit`.
    ///
    /// - Parameters:
    ///   - limit: The time limit of the whole call, waiting for other work included.
    ///   - what: What the work does, for errors ("TPM2_ReadClock on swtpm:...").
    ///   - work: The work; it may open, use, or drop (set to `nil`) the connection.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw, `TPMClockError` (`tpmTimedOut`) at the limit, or
    ///   (`tpmUnavailable`) when no thread or pipe can be had.
    func run<Value: Sendable>(
      limit: Duration, what: String,
      _ work: @escaping @Sendable (inout Connection?) throws(TPMClockError) -> Value
    ) throws(TPMClockError) -> Value {
      let deadline = ContinuousClock.now.advanced(by: limit)
      let completion = try Completion()
      let outcome = Outcome<Value>()
      while true {
        let busy: Running? = state.withLock { (state: inout State) -> Running? in
          if let running = state.running { return running }
          state.running = Running(completion: completion, abandoned: false, what: what)
          return nil
        }
        guard let busy else { break }
        if busy.abandoned {
          throw Self.timedOut(
            "\(busy.what) has not answered for longer than its limit, and still has not")
        }
        guard busy.completion.wait(until: deadline) else {
          throw Self.timedOut(
            "\(what) waited \(Self.text(limit)) for \(busy.what), which did not end")
        }
      }
      let started = Worker.start { [self] in
        var connection = state.withLock { (state: inout State) in state.connection.take() }
        let result = Result { () throws(TPMClockError) in try work(&connection) }
        outcome.value.withLock { $0 = result }
        state.withLock { (state: inout State) in
          state.connection = connection
          state.running = nil
        }
        completion.signal()
      }
      guard started else {
        state.withLock { (state: inout State) in state.running = nil }
        throw TPMClockError(
          code: .tpmUnavailable, reason: "\(what): no thread could be started for the TPM")
      }
      if completion.wait(until: deadline), let result = outcome.value.withLock({ $0 }) {
        return try result.get()
      }
      // Gave up: later callers fail at once until the work ends (unless it just did).
      let ended = state.withLock { (state: inout State) -> Bool in
        guard state.running?.completion === completion else { return true }
        state.running?.abandoned = true
        return false
      }
      if ended, let result = outcome.value.withLock({ $0 }) { return try result.get() }
      throw Self.timedOut("\(what) did not answer within \(Self.text(limit))")
    }

    private static func timedOut(_ reason: String) -> TPMClockError {
      TPMClockError(code: .tpmTimedOut, reason: reason)
    }

    /// A limit as people write it: `5s`, `250ms`.
    static func text(_ duration: Duration) -> String {
      let (seconds, attoseconds) = duration.components
      if attoseconds == 0 { return "\(seconds)s" }
      let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
      return "\(milliseconds)ms"
    }
  }

  /// The result of one piece of work, written by its worker before it signals.
  private final class Outcome<Value: Sendable>: Sendable {
    let value = Mutex<Result<Value, TPMClockError>?>(nil)
  }

  /// A one-shot signal that any number of threads can wait for with a deadline: a pipe whose
  /// read end becomes readable (and stays so) when the write end gets its byte. `poll(2)`
  /// takes a relative timeout in milliseconds, so no timer or condition variable is involved.
  private final class Completion: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    init() throws(TPMClockError) {
      var ends: [Int32] = [-1, -1]
      // pipe2 is not visible without _GNU_SOURCE: close-on-exec is set right after (a child
      // forked in between keeps two pipe ends, nothing more).
      let result = pipe(&ends)
      if result == 0 {
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
      }
      guard result == 0 else {
        throw TPMClockError(
          code: .tpmUnavailable, reason: "no pipe for the TPM's time limit (errno \(errno))")
      }
      readEnd = ends[0]
      writeEnd = ends[1]
    }

    deinit {
      close(readEnd)
      close(writeEnd)
    }

    /// Makes every wait return `true`, now and later. Called once.
    func signal() {
      var byte: UInt8 = 1
      while write(writeEnd, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Waits until ``signal()`` or the deadline.
    ///
    /// - Returns: Whether it was signalled.
    func wait(until deadline: ContinuousClock.Instant) -> Bool {
      while true {
        let remaining = ContinuousClock.now.duration(to: deadline)
        let (seconds, attoseconds) = remaining.components
        // Rounded up to whole milliseconds, so a wait never ends before the deadline.
        let milliseconds = max(
          0,
          min(
            Int64(Int32.max),
            seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
        var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(milliseconds))
        if ready > 0 { return true }
        // A timeout ends the wait even if the clock seems not to have moved (a frozen fake
        // clock); only a signal's EINTR waits again, for what is left.
        if ready == 0 || errno != EINTR { return false }
      }
    }
  }

  /// Detached threads for the lane's work.
  private enum Worker {
    private final class Body {
      let run: @Sendable () -> Void
      init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread.
    ///
    /// - Returns: Whether the thread started.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
      var attributes = pthread_attr_t()
      guard pthread_attr_init(&attributes) == 0 else { return false }
      defer { pthread_attr_destroy(&attributes) }
      pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
      let context = Unmanaged.passRetained(Body(body)).toOpaque()
      #if canImport(Glibc)
        var thread = pthread_t()
      #else
        var thread: pthread_t?
      #endif
      let result = pthread_create(
        &thread, &attributes,
        { context in
          Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
          return nil
        }, context)
      if result != 0 {
        Unmanaged<Body>.fromOpaque(context).release()
        return false
      }
      return true
    }
  }
#endif
