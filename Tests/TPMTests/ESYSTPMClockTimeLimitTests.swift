#if TPM
  import Foundation
  import OfflineTTL
  import OfflineTTLTPM
  import OfflineTTLTesting
  import Synchronization
  import Testing

  /// The time limit of every TPM call: a TPM endpoint that accepts and never answers, a swtpm
  /// that another client holds, and a port where nothing listens each fail with a typed error
  /// within the limit, and the clock works again once the TPM does.
  ///
  /// Each test is bounded by its own limits (1 s per call here): a hang would show as a test
  /// that outlives them, which the timings below record as failures.
  @Suite struct ESYSTPMClockTimeLimitTests {
    static let limit: Duration = .seconds(1)
    /// How late past the limit a timed-out call may return on a loaded machine (a thread start
    /// and a poll wake-up take microseconds when quiet).
    static let slack: Duration = .seconds(2)

    /// How long a test waits for one call before it records a hang and moves on: a library
    /// without a time limit fails these tests instead of hanging them.
    static let hangBound: DispatchTimeInterval = .seconds(15)

    /// Calls `now()` on a thread of its own, waiting at most ``hangBound``.
    ///
    /// - Returns: The result and how long it took; `nil` (and an issue) after a hang.
    static func bounded(_ clock: ESYSTPMClock) -> (
      Result<TPMClockReading, TPMClockError>, Duration
    )? {
      let outcome = Mutex<(Result<TPMClockReading, TPMClockError>, Duration)?>(nil)
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        let start = ContinuousClock.now
        let result = Result { () throws(TPMClockError) in try clock.now() }
        outcome.withLock { $0 = (result, start.duration(to: .now)) }
        done.signal()
      }
      thread.start()
      guard done.wait(timeout: .now() + hangBound) == .success else {
        Issue.record("now() on \(clock.tcti) did not return within \(hangBound)")
        return nil
      }
      return outcome.withLock { $0 }
    }

    /// Calls `now()` (bounded) and returns its error and how long it took.
    static func failure(_ clock: ESYSTPMClock) -> (TPMClockError?, Duration) {
      guard let (result, elapsed) = bounded(clock) else { return (nil, .seconds(15)) }
      switch result {
      case .success: return (nil, elapsed)
      case .failure(let error): return (error, elapsed)
      }
    }

    /// Calls `now()` (bounded) until it stops failing with `tpm_timed_out` (the call left
    /// behind has ended), for at most `seconds`.
    static func untilNotTimedOut(_ clock: ESYSTPMClock, seconds: Int = 10) -> Result<
      TPMClockReading, TPMClockError
    > {
      let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
      while true {
        guard let (result, _) = bounded(clock) else {
          return .failure(TPMClockError(code: .tpmTimedOut, reason: "hung (test)"))
        }
        if case .failure(let error) = result, error.code == .tpmTimedOut,
          ContinuousClock.now < deadline
        {
          usleep(50_000)
          continue
        }
        return result
      }
    }

    @Test(arguments: ["swtpm", "mssim"])
    func anEndpointThatNeverAnswersTimesOutAndRecovers(kind: String) throws {
      let endpoint = try SilentTPMEndpoint()
      defer { endpoint.close() }
      let clock = try ESYSTPMClock(tcti: endpoint.tcti(kind), timeout: Self.limit)
      let (error, elapsed) = Self.failure(clock)
      #expect(error?.code == .tpmTimedOut, "\(String(describing: error))")
      #expect(error?.description.contains(endpoint.tcti(kind)) == true)
      #expect(elapsed >= Self.limit && elapsed < Self.limit + Self.slack, "\(elapsed)")

      // The call left behind still waits: the next one fails at once, without another thread.
      let (again, quickly) = Self.failure(clock)
      #expect(again?.code == .tpmTimedOut, "\(String(describing: again))")
      #expect(quickly < Self.limit / 2, "\(quickly)")

      // The endpoint goes away: the call left behind ends, and the clock reports what it
      // finds now (a refused connection), not a timeout.
      endpoint.close()
      let after = Self.untilNotTimedOut(clock)
      guard case .failure(let final) = after else {
        Issue.record("a closed endpoint was read")
        return
      }
      #expect(final.code == .tpmUnavailable, "\(final)")
    }

    @Test(
      .enabled(if: SwtpmProcess.isAvailable, "needs swtpm and tpm2-tools (swtpm, tpm2_shutdown)"))
    func aTPMHeldByAnotherClientTimesOutThenAnswersOnceReleased() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let open = try ESYSTPMClock(tcti: swtpm.tcti, timeout: Self.limit)
      let before = try open.now()
      let fresh = try ESYSTPMClock(tcti: swtpm.tcti, timeout: Self.limit)

      let holder = try HeldTCPConnection(port: swtpm.port)
      // A clock with its connection open (a command) and a new one (the TCTI's setup and the
      // identity's key derivation): each fails within its limit.
      for clock in [open, fresh] {
        let (error, elapsed) = Self.failure(clock)
        #expect(error?.code == .tpmTimedOut, "\(String(describing: error))")
        #expect(elapsed >= Self.limit && elapsed < Self.limit + Self.slack, "\(elapsed)")
      }

      holder.close()
      for clock in [open, fresh] {
        let reading = try Self.untilNotTimedOut(clock).get()
        #expect(reading.identity == before.identity)
        #expect(reading.clockMilliseconds >= before.clockMilliseconds)
      }
    }

    @Test(
      .enabled(if: SwtpmProcess.isAvailable, "needs swtpm and tpm2-tools (swtpm, tpm2_shutdown)"))
    func concurrentCallersOnAHeldTPMAllFailWithinTheirLimit() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let clock = try ESYSTPMClock(tcti: swtpm.tcti, timeout: Self.limit)
      _ = try clock.now()
      let holder = try HeldTCPConnection(port: swtpm.port)
      defer { holder.close() }
      let results = Mutex<[(TPMClockError?, Duration)]>([])
      runConcurrently(4) { _ in
        let result = Self.failure(clock)
        results.withLock { $0.append(result) }
      }
      let all = results.withLock { $0 }
      #expect(all.count == 4)
      for (error, elapsed) in all {
        #expect(error?.code == .tpmTimedOut, "\(String(describing: error))")
        #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
      }
    }

    @Test(
      .enabled(if: SwtpmProcess.isAvailable, "needs swtpm and tpm2-tools (swtpm, tpm2_shutdown)"))
    func concurrentCallersOnAHealthyTPMAllGetReadings() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      // A generous limit: on a loaded machine 8 threads queue for one TPM.
      let clock = try ESYSTPMClock(tcti: swtpm.tcti, timeout: .seconds(10))
      let identity = try clock.now().identity
      let failures = Mutex<[String]>([])
      let readings = Mutex(0)
      runConcurrently(8) { _ in
        var last: UInt64 = 0
        for _ in 0..<20 {
          do throws(TPMClockError) {
            let reading = try clock.now()
            if reading.identity != identity || reading.clockMilliseconds < last {
              failures.withLock { $0.append("\(reading)") }
            }
            last = reading.clockMilliseconds
            readings.withLock { $0 += 1 }
          } catch {
            failures.withLock { $0.append("\(error)") }
          }
        }
      }
      #expect(failures.withLock { $0 } == [])
      #expect(readings.withLock { $0 } == 160)
    }

    @Test func aPortWithNothingListeningIsUnavailableAtOnce() throws {
      let port = try SilentTPMEndpoint.unusedPort()
      for kind in ["swtpm", "mssim"] {
        let clock = try ESYSTPMClock(
          tcti: "\(kind):host=127.0.0.1,port=\(port)", timeout: .seconds(5))
        let (error, elapsed) = Self.failure(clock)
        #expect(error?.code == .tpmUnavailable, "\(String(describing: error))")
        #expect(elapsed < .seconds(2), "\(elapsed)")
      }
    }

    @Test(arguments: [Duration.zero, .milliseconds(-1), .seconds(3601)])
    func timeLimitsOutOfRangeAreRejected(timeout: Duration) {
      #expect(throws: InvalidValueError.self) {
        try ESYSTPMClock(tcti: "swtpm:host=127.0.0.1,port=2321", timeout: timeout)
      }
    }

    @Test func theDefaultLimitIsFiveSeconds() throws {
      let clock = try ESYSTPMClock(tcti: "swtpm:host=127.0.0.1,port=2321")
      #expect(clock.timeout == .seconds(5))
      #expect(ESYSTPMClock.defaultTimeout == .seconds(5))
    }
  }
#endif
