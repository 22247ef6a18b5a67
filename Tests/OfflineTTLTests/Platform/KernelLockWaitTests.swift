#if os(Linux)
  import Foundation
  import OfflineTTLTesting
  import Synchronization
  import Testing

  @_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

  import Glibc

  /// The lock wait that the kernel ends (`KernelLockWait`, used by
  /// `Syscalls.flock(_:_:waitingAtMost:)` on Linux): granted when the holder releases, without
  /// polling (exactly one blocking `flock` after the first try), timed out at the limit by the
  /// timer signal, another signal only makes it wait on, and a thread that blocks the signal
  /// polls as before, except inside `Syscalls.allowingKernelLockWaits` (the `async` variants'
  /// store work). Each wait runs on a thread of its own (the test runner's threads block
  /// every signal) and is bounded: the holder's watchdog releases the lock after 20 s and the
  /// test stops waiting for the thread after 30 s. Serialized: the timers of the process are
  /// counted before and after each wait.
  @Suite(.serialized) struct KernelLockWaitTests {
    static let limit: Duration = .milliseconds(300)
    /// How late past its limit, or past a release, an answer may come on a loaded machine.
    static let slack: Duration = .seconds(3)

    /// A lock file in a scratch directory, a seam that counts `flock` calls, and a descriptor.
    struct Fixture {
      let root: TemporaryStoreDirectory
      let path: String
      let plan = SyscallFaultPlan()
      let system: Syscalls
      let fd: FileDescriptor

      init() throws {
        root = try TemporaryStoreDirectory(prefix: "kernel-lock-wait")
        path = root.appending("lock")
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        system = Syscalls(faults: plan)
        fd = try system.open(path, .readOnly)
      }

      func remove() {
        system.closeIgnoringErrors(fd)
        root.remove()
      }
    }

    /// What one wait on its own thread ended with.
    struct Outcome: Sendable {
      var error: Errno?
      var elapsed: Duration
      /// `KernelLockWait.unavailability` on that thread, before the wait.
      var unavailability: String?
      /// The timers of the process before and after the wait (`/proc/self/timers`).
      var timersBefore: Int
      var timersAfter: Int
    }

    /// The POSIX timers of this process made for waits of the thread whose kernel id is
    /// `thread` (both carry it as their value: the `signal:` line of `/proc/self/timers` reads
    /// `<signal>/<value in hex>`), or -1 when that file cannot be read. Other tests' waits in
    /// the same process, at the same time, are not counted.
    static func timerCount(of thread: pid_t?) -> Int {
      guard let thread,
        let text = try? String(contentsOfFile: "/proc/self/timers", encoding: .utf8)
      else { return -1 }
      return text.split(separator: "\n").filter { line in
        guard line.hasPrefix("signal:"), let value = line.split(separator: "/").last else {
          return false
        }
        return UInt64(value.drop(while: { $0 == "0" || $0 == "x" }), radix: 16)
          ?? 0 == UInt64(thread)
      }.count
    }

    /// Runs `wait` on a new thread whose mask blocks or unblocks the lock-wait signal, and
    /// returns its outcome; `started` runs on the caller's thread once the wait has begun (with
    /// the waiting thread's `pthread_t` and kernel id). Records an issue after 30 s (and returns an outcome
    /// that fails every check).
    static func onThread(
      blockingTheSignal: Bool, _ wait: @escaping @Sendable () throws(Errno) -> Void,
      started: (pthread_t, pid_t?) -> Void = { _, _ in }
    ) -> Outcome {
      let result = Mutex<Outcome?>(nil)
      let waiter = Mutex<(pthread_t, pid_t?)?>(nil)
      let done = DispatchSemaphore(value: 0)
      Thread {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, KernelLockWait.signalNumber)
        pthread_sigmask(blockingTheSignal ? SIG_BLOCK : SIG_UNBLOCK, &set, nil)
        let unavailability = KernelLockWait.unavailability
        let thread = KernelLockWait.currentThreadID
        waiter.withLock { $0 = (pthread_self(), thread) }
        let before = timerCount(of: thread)
        let clock = ContinuousClock()
        let start = clock.now
        var error: Errno? = nil
        do throws(Errno) { try wait() } catch let caught { error = caught }
        let elapsed = clock.now - start
        result.withLock {
          $0 = Outcome(
            error: error, elapsed: elapsed, unavailability: unavailability,
            timersBefore: before, timersAfter: timerCount(of: thread))
        }
        done.signal()
      }.start()
      while waiter.withLock({ $0 }) == nil { usleep(1_000) }
      let (pthread, thread) = waiter.withLock { $0! }
      started(pthread, thread)
      guard done.wait(timeout: .now() + 30) == .success, let outcome = result.withLock({ $0 })
      else {
        Issue.record("the wait did not end in 30 s")
        return Outcome(
          error: nil, elapsed: .seconds(30), unavailability: "hung", timersBefore: 0,
          timersAfter: -1)
      }
      return outcome
    }

    @Test func aLockReleasedDuringTheWaitIsGrantedByTheKernelWithoutPolling() throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      let (system, fd) = (fixture.system, fixture.fd)
      let releasedAt = Mutex<ContinuousClock.Instant?>(nil)
      let timersDuring = Mutex(-1)
      let outcome = Self.onThread(
        blockingTheSignal: false,
        { () throws(Errno) in try system.flock(fd, .exclusive, waitingAtMost: .seconds(10)) },
        started: { _, thread in
          usleep(200_000)
          timersDuring.withLock { $0 = Self.timerCount(of: thread) }
          releasedAt.withLock { $0 = ContinuousClock.now }
          held.release()
        })
      #expect(outcome.unavailability == nil, "\(outcome.unavailability ?? "")")
      #expect(outcome.error == nil, "\(String(describing: outcome.error))")
      #expect(fixture.plan.count(of: .flock) == 2, "one try, then one blocking flock: no polling")
      #expect(outcome.elapsed >= .milliseconds(200), "not before the release, \(outcome.elapsed)")
      #expect(outcome.elapsed < .milliseconds(200) + Self.slack, "\(outcome.elapsed)")
      #expect(timersDuring.withLock { $0 } == 2, "the stopwatch and the kicker, while it waits")
      #expect(outcome.timersBefore == 0)
      #expect(outcome.timersAfter == outcome.timersBefore, "both timers deleted")
      #expect(!held.wasReleasedByWatchdog)
    }

    @Test func aHolderPastTheLimitEndsTheWaitWithTimedOutAtTheLimit() throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let held = try HeldFileLock(fixture.path, shared: true, releasingAfter: .seconds(20))
      defer { held.release() }
      let (system, fd) = (fixture.system, fixture.fd)
      let outcome = Self.onThread(blockingTheSignal: false) { () throws(Errno) in
        try system.flock(fd, .exclusive, waitingAtMost: Self.limit)
      }
      #expect(outcome.unavailability == nil, "\(outcome.unavailability ?? "")")
      #expect(outcome.error == .timedOut, "\(String(describing: outcome.error))")
      #expect(outcome.elapsed >= Self.limit, "\(outcome.elapsed)")
      #expect(outcome.elapsed < Self.limit + Self.slack, "\(outcome.elapsed)")
      #expect(fixture.plan.count(of: .flock) == 2, "the timer ended the one blocking flock")
      #expect(outcome.timersAfter == outcome.timersBefore, "both timers deleted")
      #expect(outcome.timersBefore >= 0, "/proc/self/timers is readable")
      #expect(!held.wasReleasedByWatchdog)
    }

    /// Another signal (the same number, sent by someone else, or an `EINTR` the seam reports)
    /// interrupts the blocking `flock`: the wait goes on for the time left, then times out at the
    /// limit, or is granted at the release.
    @Test(arguments: [false, true])
    func anotherInterruptionKeepsWaitingForTheTimeLeft(released: Bool) throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      // The first blocking flock reports EINTR without being made.
      fixture.plan.fail(.flock, occurrence: 2, with: .interrupted)
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      defer { held.release() }
      let (system, fd) = (fixture.system, fixture.fd)
      let limit: Duration = released ? .seconds(5) : .milliseconds(800)
      let outcome = Self.onThread(
        blockingTheSignal: false,
        { () throws(Errno) in try system.flock(fd, .exclusive, waitingAtMost: limit) },
        started: { thread, _ in
          // Once the thread has made its third flock (the one after the injected EINTR), and
          // is blocked in it.
          let deadline = ContinuousClock.now + .seconds(10)
          while fixture.plan.count(of: .flock) < 3, ContinuousClock.now < deadline {
            usleep(1_000)
          }
          usleep(100_000)
          pthread_kill(thread, KernelLockWait.signalNumber)
          if released {
            usleep(200_000)
            held.release()
          }
        })
      #expect(outcome.unavailability == nil, "\(outcome.unavailability ?? "")")
      if released {
        #expect(
          outcome.error == nil, "granted at the release, \(String(describing: outcome.error))")
        #expect(outcome.elapsed >= .milliseconds(300), "after the release, \(outcome.elapsed)")
        #expect(outcome.elapsed < limit, "before the limit, \(outcome.elapsed)")
      } else {
        #expect(outcome.error == .timedOut, "\(String(describing: outcome.error))")
        #expect(outcome.elapsed >= limit, "waited the whole limit, \(outcome.elapsed)")
        #expect(outcome.elapsed < limit + Self.slack, "\(outcome.elapsed)")
      }
      // The try, the injected EINTR, the flock the signal interrupted, and the last one.
      #expect(fixture.plan.count(of: .flock) == 4, "\(fixture.plan.trace)")
      #expect(outcome.timersAfter == outcome.timersBefore, "both timers deleted")
    }

    @Test func aThreadThatBlocksTheSignalPollsAndStillKeepsTheLimit() throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      defer { held.release() }
      let (system, fd) = (fixture.system, fixture.fd)
      let outcome = Self.onThread(blockingTheSignal: true) { () throws(Errno) in
        try system.flock(fd, .exclusive, waitingAtMost: Self.limit)
      }
      #expect(
        outcome.unavailability?.contains("blocked") == true, "\(outcome.unavailability ?? "")")
      #expect(outcome.error == .timedOut, "\(String(describing: outcome.error))")
      #expect(outcome.elapsed >= Self.limit, "\(outcome.elapsed)")
      #expect(outcome.elapsed < Self.limit + Self.slack, "\(outcome.elapsed)")
      #expect(fixture.plan.count(of: .flock) > 2, "it polled")
      #expect(outcome.timersAfter == outcome.timersBefore, "no timer made")

      // Released during a polled wait: taken soon after.
      fixture.plan.resetCounts()
      let granted = Self.onThread(
        blockingTheSignal: true,
        { () throws(Errno) in try system.flock(fd, .exclusive, waitingAtMost: .seconds(10)) },
        started: { _, _ in
          usleep(100_000)
          held.release()
        })
      #expect(granted.error == nil, "\(String(describing: granted.error))")
      #expect(granted.elapsed < .milliseconds(100) + Self.slack, "\(granted.elapsed)")
    }

    /// Inside `Syscalls.allowingKernelLockWaits`, a thread that blocks the signal waits in the
    /// kernel (one blocking `flock`, granted at the release), and blocks the signal again after.
    @Test func aThreadThatBlocksTheSignalWaitsInTheKernelInsideAllowingKernelLockWaits() throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      let (system, fd) = (fixture.system, fixture.fd)
      let inside = Mutex<String?>("not run")
      let blockedAfter = Mutex<Bool?>(nil)
      let outcome = Self.onThread(
        blockingTheSignal: true,
        { () throws(Errno) in
          try Syscalls.allowingKernelLockWaits { () throws(Errno) in
            inside.withLock { $0 = KernelLockWait.unavailability }
            try system.flock(fd, .exclusive, waitingAtMost: .seconds(10))
          }
          var mask = sigset_t()
          pthread_sigmask(SIG_BLOCK, nil, &mask)
          blockedAfter.withLock { $0 = sigismember(&mask, KernelLockWait.signalNumber) == 1 }
        },
        started: { _, _ in
          usleep(200_000)
          held.release()
        })
      #expect(
        outcome.unavailability?.contains("blocked") == true, "\(outcome.unavailability ?? "")")
      #expect(inside.withLock { $0 } == nil, "\(inside.withLock { $0 } ?? "")")
      #expect(outcome.error == nil, "\(String(describing: outcome.error))")
      #expect(fixture.plan.count(of: .flock) == 2, "one try, then one blocking flock: no polling")
      #expect(outcome.elapsed >= .milliseconds(200), "not before the release, \(outcome.elapsed)")
      #expect(outcome.elapsed < .milliseconds(200) + Self.slack, "\(outcome.elapsed)")
      #expect(blockedAfter.withLock { $0 } == true, "the thread's mask is put back")
      #expect(outcome.timersAfter == outcome.timersBefore, "both timers deleted")
      #expect(!held.wasReleasedByWatchdog)
    }

    /// The gate's `async` variants run their store work on a Dispatch queue, whose threads block
    /// every signal: that work still waits in the kernel, and times out at the limit.
    @Test(arguments: [false, true])
    func storeWorkOfTheAsyncVariantsWaitsInTheKernel(released: Bool) async throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      defer { held.release() }
      let (system, fd) = (fixture.system, fixture.fd)
      let limit: Duration = released ? .seconds(10) : Self.limit
      // Released 200 ms after the work starts (the queue may start it late when its threads
      // are busy); timed inside the work for the same reason.
      let workStarted = DispatchSemaphore(value: 0)
      if released {
        Thread {
          guard workStarted.wait(timeout: .now() + 30) == .success else { return }
          usleep(200_000)
          held.release()
        }.start()
      }
      let (error, elapsed) = await BlockingStoreWork.run { () -> (Errno?, Duration) in
        let clock = ContinuousClock()
        let start = clock.now
        workStarted.signal()
        do throws(Errno) {
          try system.flock(fd, .exclusive, waitingAtMost: limit)
          return (nil, clock.now - start)
        } catch { return (error, clock.now - start) }
      }
      #expect(fixture.plan.count(of: .flock) == 2, "one try, then one blocking flock: no polling")
      if released {
        #expect(error == nil, "\(String(describing: error))")
        #expect(elapsed >= .milliseconds(200), "not before the release, \(elapsed)")
      } else {
        #expect(error == .timedOut, "\(String(describing: error))")
        #expect(elapsed >= limit, "\(elapsed)")
        #expect(elapsed < limit + Self.slack, "\(elapsed)")
      }
    }

    @Test func aFreeLockIsOneFlockAndAnotherFailureIsNotATimeout() throws {
      let fixture = try Fixture()
      defer { fixture.remove() }
      let (system, fd) = (fixture.system, fixture.fd)
      let outcome = Self.onThread(blockingTheSignal: false) { () throws(Errno) in
        try system.flock(fd, .shared, waitingAtMost: Self.limit)
      }
      #expect(outcome.error == nil)
      #expect(fixture.plan.count(of: .flock) == 1)
      #expect(outcome.timersAfter == outcome.timersBefore, "no timer for a free lock")
      try system.flock(fd, .unlock)

      // The blocking flock fails otherwise: that error, and the timers are deleted.
      fixture.plan.resetCounts()
      fixture.plan.fail(.flock, occurrence: 2, with: .ioError)
      let held = try HeldFileLock(fixture.path, releasingAfter: .seconds(20))
      defer { held.release() }
      let failed = Self.onThread(blockingTheSignal: false) { () throws(Errno) in
        try system.flock(fd, .exclusive, waitingAtMost: .seconds(10))
      }
      #expect(failed.error == .ioError, "\(String(describing: failed.error))")
      #expect(failed.elapsed < Self.slack, "\(failed.elapsed)")
      #expect(failed.timersAfter == failed.timersBefore, "both timers deleted")
    }

    /// A mark store's check behind a held mark lock, on a thread that lets the kernel wait:
    /// `lock_timed_out` within the limit, with one blocking `flock` (the first operation's
    /// locked path) and none for the long-lived store's group commit polls' fallback.
    @Test func aMarkObservationBehindAHeldLockTimesOutThroughTheKernelWait() throws {
      let root = try TemporaryStoreDirectory(prefix: "kernel-lock-wait-store")
      defer { root.remove() }
      let path = root.appending("store")
      _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(
        now: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000))
      let plan = SyscallFaultPlan()
      var store = FileClockMarkStore(atPath: path, faults: plan)
      store.lockTimeout = Self.limit
      let held = try HeldFileLock(
        path + "/" + FileClockMarkStore.lockFileName, releasingAfter: .seconds(20))
      defer { held.release() }
      let code = Mutex<StoreError.Code?>(nil)
      let outcome = Self.onThread(blockingTheSignal: false) { [store] () throws(Errno) in
        do {
          _ = try store.observe(
            now: WallClockInstant(nanosecondsSinceEpoch: 1_800_000_000_000_000_000))
        } catch let error as StoreError {
          code.withLock { $0 = error.code }
        } catch {}
      }
      #expect(code.withLock { $0 } == .lockTimedOut)
      #expect(outcome.elapsed >= Self.limit, "\(outcome.elapsed)")
      #expect(outcome.elapsed < Self.limit + Self.slack, "\(outcome.elapsed)")
      #expect(plan.count(of: .flock) == 2, "one try, one blocking flock: \(plan.trace)")
      #expect(outcome.timersAfter == outcome.timersBefore)
    }

    @Test func theHandlerIsOnlyInstalledOverTheDefaultAndOnlyOursWithoutRestartIsUsed() {
      let own: KernelLockWait.SignalHandler = { _ in }
      // Never called: only its address differs from the own handler's.
      let other = unsafeBitCast(0x1000, to: KernelLockWait.SignalHandler.self)
      func action(_ handler: KernelLockWait.SignalHandler?, flags: Int32 = 0) -> sigaction {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = flags
        return action
      }
      #expect(KernelLockWait.isOwnHandler(action(own), own: own))
      #expect(KernelLockWait.isOwnHandler(action(own, flags: 0x0400_0000), own: own), "SA_RESTORER")
      #expect(!KernelLockWait.isOwnHandler(action(own, flags: Int32(SA_RESTART)), own: own))
      #expect(!KernelLockWait.isOwnHandler(action(own, flags: Int32(SA_SIGINFO)), own: own))
      #expect(!KernelLockWait.isOwnHandler(action(other), own: own))
      #expect(KernelLockWait.mayInstall(over: action(nil)), "SIG_DFL")
      #expect(!KernelLockWait.mayInstall(over: action(other)))
      #expect(
        !KernelLockWait.mayInstall(
          over: action(unsafeBitCast(1, to: KernelLockWait.SignalHandler.self))), "SIG_IGN")
    }
  }
#endif
