import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Every lock wait of the file stores has a time limit: a holder that never lets go (here a
/// second open file description of the lock file holding `flock`, which the store cannot tell
/// from a process stopped with `SIGSTOP`) makes a check, a sign-in and a read end with
/// `lock_timed_out` within the store's `lockTimeout`, never `fresh`, and nothing is written or
/// deleted. Each wait here is bounded by the limit under test (at most 300 ms) plus `slack`.
@Suite struct StoreLockTimeoutTests {
  /// The limit every store here is given.
  static let limit: Duration = .milliseconds(300)
  /// How late past its limit a refusal may come on a loaded machine (two cores shared by many
  /// builds): the group-commit polls before the wait, the scheduler's lateness.
  static let slack: Duration = .seconds(3)

  /// The error `body` threw, or `nil` (no typed-throws closure is handed to `#expect`).
  static func failure(_ body: () throws(Errno) -> Void) -> Errno? {
    do {
      try body()
      return nil
    } catch {
      return error
    }
  }

  /// Runs `body` and returns its result with how long it took.
  static func timed<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try body()
    return (result, clock.now - start)
  }

  /// A signed-in store directory (one item `token`), with gates whose stores wait at most
  /// ``limit``.
  struct Fixture {
    let base: DirectoryGateFixture

    init(sealed: Bool = false) throws {
      base = try DirectoryGateFixture(prefix: "lock-timeout", sealed: sealed)
      try base.signIn(["token": "secret"])
    }

    var markLock: String { base.store + "/" + FileClockMarkStore.lockFileName }
    var cacheLock: String { base.store + "/cache/lock" }

    func marks() -> FileClockMarkStore {
      var marks = FileClockMarkStore(atPath: base.store, sealing: base.provider)
      marks.lockTimeout = StoreLockTimeoutTests.limit
      return marks
    }

    func cache() -> DirectoryCacheStore {
      var cache = DirectoryCacheStore(atPath: base.store, sealing: base.provider)
      cache.lockTimeout = StoreLockTimeoutTests.limit
      return cache
    }

    func gate() -> OfflineAccessGate { base.gate(cache: cache(), marks: marks()) }

    /// The bytes of every file in the store, by relative path.
    func snapshot() throws -> [String: Data] {
      var files: [String: Data] = [:]
      let root = URL(fileURLWithPath: base.store)
      let walker = try #require(FileManager.default.enumerator(atPath: base.store))
      for case let name as String in walker {
        let url = root.appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
          !isDirectory.boolValue
        {
          files[name] = try Data(contentsOf: url)
        }
      }
      return files
    }
  }

  // MARK: The bounded wait itself

  @Test func aFreeLockIsTakenWithOneCallAndAHeldOneTimesOutWithinTheLimit() throws {
    let root = try TemporaryStoreDirectory(prefix: "lock-wait")
    defer { root.remove() }
    let path = root.appending("lock")
    try #require(FileManager.default.createFile(atPath: path, contents: nil))
    let plan = SyscallFaultPlan()
    let system = Syscalls(faults: plan)
    let fd = try system.open(path, .readOnly)
    defer { system.closeIgnoringErrors(fd) }

    try system.flock(fd, .exclusive, waitingAtMost: Self.limit)
    #expect(plan.count(of: .flock) == 1, "a free lock costs one flock, as a blocking one did")
    try system.flock(fd, .unlock)

    let held = try HeldFileLock(path, shared: true)
    // A shared holder does not stop a shared lock, only an exclusive one.
    try system.flock(fd, .shared, waitingAtMost: .zero)
    try system.flock(fd, .unlock)
    let (result, elapsed) = Self.timed {
      Self.failure { () throws(Errno) in
        try system.flock(fd, .exclusive, waitingAtMost: Self.limit)
      }
    }
    #expect(result == .timedOut)
    #expect(elapsed >= Self.limit, "it waited the limit, \(elapsed)")
    #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
    held.release()
  }

  @Test func aZeroLimitTriesOnceAndALockReleasedDuringTheWaitIsTaken() throws {
    let root = try TemporaryStoreDirectory(prefix: "lock-wait")
    defer { root.remove() }
    let path = root.appending("lock")
    try #require(FileManager.default.createFile(atPath: path, contents: nil))
    let plan = SyscallFaultPlan()
    let system = Syscalls(faults: plan)
    let fd = try system.open(path, .readOnly)
    defer { system.closeIgnoringErrors(fd) }

    let held = try HeldFileLock(path)
    plan.resetCounts()
    #expect(
      Self.failure { () throws(Errno) in try system.flock(fd, .exclusive, waitingAtMost: .zero) }
        == .timedOut)
    #expect(plan.count(of: .flock) == 1, "a zero limit never pauses")

    // Released 100 ms into a 10 s wait: taken soon after, not at the limit.
    let release = Thread {
      Thread.sleep(forTimeInterval: 0.1)
      held.release()
    }
    release.start()
    let (result, elapsed) = Self.timed {
      Self.failure { () throws(Errno) in
        try system.flock(fd, .exclusive, waitingAtMost: .seconds(10))
      }
    }
    #expect(result == nil)
    #expect(
      elapsed >= .milliseconds(50) && elapsed < .seconds(5), "taken after the release, \(elapsed)")
    held.release()
  }

  @Test func anotherFailureIsNotATimeout() throws {
    let system = Syscalls()
    #expect(
      Self.failure { () throws(Errno) in
        try system.flock(FileDescriptor(rawValue: -1), .exclusive, waitingAtMost: Self.limit)
      } == .badFileDescriptor)
  }

  // MARK: Check, sign-in and read behind a held lock

  /// A reader holding the mark lock shared (`flock -s`, or a process stopped inside a read)
  /// stops every observation, which needs it exclusively: a check is refused within the limit
  /// with `lock_timed_out`, never `fresh` from a mark it could not advance, and a read of the
  /// record, which needs it shared only, answers at once.
  @Test(arguments: [false, true])
  func aCheckBehindASharedMarkLockIsRefusedAndAReadIsNot(sealed: Bool) throws {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.base.root.remove() }
    fixture.base.clock.advance(by: .seconds(60))
    let held = try HeldFileLock(fixture.markLock, shared: true)
    defer { held.release() }
    let before = try fixture.snapshot()
    let (decision, elapsed) = Self.timed { fixture.gate().checkEligibility() }
    #expect(decision.status == .expired, "\(decision)")
    #expect(decision.markError?.code == .lockTimedOut, "\(String(describing: decision.markError))")
    #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
    let (record, readTime) = try Self.timed { try fixture.marks().read() }
    #expect(record.generation == 1)
    #expect(readTime < Self.limit, "a shared read is not held up, \(readTime)")
    #expect(try fixture.snapshot() == before, "nothing written")
  }

  @Test(arguments: [false, true])
  func aCheckBehindAHeldMarkLockIsRefusedWithLockTimedOut(sealed: Bool) throws {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.base.root.remove() }
    let before = try fixture.snapshot()
    // A new gate (the full locked path) and a long-lived one (the kept descriptors and group
    // commit's polls, then the bounded wait).
    let longLived = fixture.gate()
    #expect(longLived.checkEligibility().status == .fresh)
    fixture.base.clock.advance(by: .seconds(60))
    let held = try HeldFileLock(fixture.markLock)
    for gate in [fixture.gate(), longLived] {
      let (decision, elapsed) = Self.timed { gate.checkEligibility() }
      #expect(decision.status == .expired, "\(decision)")
      #expect(
        decision.markError?.code == .lockTimedOut, "\(String(describing: decision.markError))")
      #expect(decision.reasons.contains(.markNotPersisted), "\(decision.reasons)")
      #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
      guard case .refused(let refusal) = gate.openOffline() else {
        Issue.record("opened behind a held mark lock")
        continue
      }
      #expect(refusal.markError?.code == .lockTimedOut)
    }
    let observe = Result { () throws(StoreError) in
      try fixture.marks().observe(now: fixture.base.clock.now())
    }
    if case .failure(let error) = observe {
      #expect(error.code == .lockTimedOut, "\(error)")
    } else {
      Issue.record("observed behind a held mark lock")
    }
    #expect(try fixture.snapshot() == before, "nothing written or deleted")
    #expect(held.release(), "held until here")

    // Released: the same long-lived gate answers again.
    #expect(longLived.checkEligibility().status == .fresh)
  }

  /// Behind an item-store lock held either way, or a mark lock held exclusively, the sign-in
  /// writes nothing at all: it cannot take the writer lock, or cannot read the stored
  /// generation under the mark lock (it never reads it without the lock), within the limit.
  /// Behind a shared mark lock it reads the generation, stages its items and fails at its commit
  /// point (the reset): the staging stays uncommitted, readers keep the old items, and the next
  /// sign-in commits over it. Each ends within one limit.
  @Test(arguments: [false, true])
  func aSignInBehindAHeldLockFailsWithLockTimedOutAndCommitsNothing(sealed: Bool) throws {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.base.root.remove() }
    let before = try fixture.snapshot()
    let holds = [
      (fixture.cacheLock, false), (fixture.cacheLock, true), (fixture.markLock, false),
      (fixture.markLock, true),
    ]
    for (lock, shared) in holds {
      let held = try HeldFileLock(lock, shared: shared)
      defer { held.release() }
      let (result, elapsed) = Self.timed {
        Result { () throws(OnlineSessionError) in
          try fixture.gate().beginOnlineSession(
            writing: [(CacheItemKey("token"), Data("new".utf8))])
        }
      }
      #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
      guard case .failure(let error) = result else {
        Issue.record("signed in behind a held \(lock) (shared: \(shared))")
        continue
      }
      #expect(error.storeError?.code == .lockTimedOut, "\(lock): \(error)")
      if !(lock == fixture.markLock && shared) {
        #expect(try fixture.snapshot() == before, "nothing written behind \(lock), \(shared)")
      }
      #expect(held.release(), "held until here")
      let reader = try #require(fixture.gate().openOffline().reader)
      #expect(try reader.item(forKey: "token")?.payload == Data("secret".utf8), "\(lock)")
      #expect(try fixture.marks().read().generation == 1, "no reset")
    }
    try fixture.base.signIn(["token": "later"])
    let reader = try #require(fixture.gate().openOffline().reader)
    #expect(try reader.item(forKey: "token")?.payload == Data("later".utf8))
    #expect(try fixture.marks().read().generation == 2)
    let left = try FileManager.default.contentsOfDirectory(atPath: fixture.base.store + "/cache")
    #expect(!left.contains { $0.hasPrefix("next-") || $0 == "pending" }, "\(left)")
  }

  /// A mark store whose `read()` gives up on its lock (`lock_timed_out`, as a Secret Service
  /// mark store does behind its held lock file); every other operation is the file store's.
  struct ReadTimingOut: ClockMarkStore {
    let inner: FileClockMarkStore

    func read() throws(StoreError) -> ClockMarkRecord {
      throw StoreError(code: .lockTimedOut, message: "the mark lock stayed held (test)")
    }

    func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkTransition
    {
      try inner.observe(resolution: resolution, readingClocks: clocks)
    }

    func createFirstMark(readingClocks clocks: () -> ClockObservation) throws(StoreError)
      -> ClockMarkRecord
    {
      try inner.createFirstMark(readingClocks: clocks)
    }

    func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkRecord
    {
      try inner.resetAfterOnlineSignIn(readingClocks: clocks)
    }
  }

  /// A stored generation that could not be read because its lock stayed held is not "no
  /// generation": a sign-in then ends with `lock_timed_out` before it touches anything, so a
  /// committed sign-in's staging (whose roll forward failed) is neither removed nor replaced,
  /// and its items, not the ones they replaced, are still served; the next sign-in finishes it.
  @Test(arguments: [false, true])
  func aSignInThatCannotReadTheGenerationLeavesACommittedStagingAlone(sealed: Bool) throws {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.base.root.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.renameat, occurrence: nil, with: .ioError)
    let noRollForward = fixture.base.gate(
      cache: DirectoryCacheStore(
        atPath: fixture.base.store, faults: plan, sealing: fixture.base.provider))
    _ = try noRollForward.beginOnlineSession(writing: [(CacheItemKey("token"), Data("new".utf8))])
    let names = try FileManager.default.contentsOfDirectory(atPath: fixture.base.store + "/cache")
    try #require(names.contains("pending") && names.contains { $0.hasPrefix("next-") }, "\(names)")
    let committed = try fixture.snapshot()
    #expect(try fixture.marks().read().generation == 2)

    let gate = fixture.base.gate(marks: ReadTimingOut(inner: fixture.marks()))
    let refused = #expect(throws: OnlineSessionError.self) {
      try gate.beginOnlineSession(writing: [(CacheItemKey("other"), Data("x".utf8))])
    }
    #expect(refused?.storeError?.code == .lockTimedOut, "\(String(describing: refused))")
    #expect(try fixture.snapshot() == committed, "nothing staged, removed or reset")
    #expect(try fixture.marks().read().generation == 2)
    let reader = try #require(fixture.gate().openOffline().reader)
    #expect(try reader.item(forKey: "token")?.payload == Data("new".utf8))

    try fixture.base.signIn(["other": "x"])
    let after = try #require(fixture.gate().openOffline().reader)
    #expect(try after.item(forKey: "token")?.payload == Data("new".utf8), "not the replaced item")
    #expect(try after.item(forKey: "other")?.payload == Data("x".utf8))
  }

  /// `generationForSignIn()`: the generation; `nil` for an absent or unreadable record (the
  /// reset replaces it); `lock_timed_out` thrown.
  @Test func theGenerationForASignInTellsALockThatTimedOutFromNoRecord() throws {
    let fixture = try Fixture()
    defer { fixture.base.root.remove() }
    #expect(try fixture.marks().generationForSignIn() == 1)
    #expect(throws: StoreError(code: .lockTimedOut, message: "")) {
      try ReadTimingOut(inner: fixture.marks()).generationForSignIn()
    }
    let missing = FileClockMarkStore(atPath: fixture.base.root.appending("none"))
    #expect(try missing.generationForSignIn() == nil)
    try Data(count: 64).write(
      to: URL(fileURLWithPath: fixture.base.store + "/" + FileClockMarkStore.recordFileName))
    #expect(try fixture.marks().generationForSignIn() == nil, "unreadable")
  }

  @Test func aReadBehindAHeldMarkLockReadsTheRecordWithoutIt() throws {
    let fixture = try Fixture()
    defer { fixture.base.root.remove() }
    let held = try HeldFileLock(fixture.markLock)
    let (record, elapsed) = try Self.timed { try fixture.marks().read() }
    #expect(record.generation == 1)
    #expect(elapsed >= Self.limit && elapsed < Self.limit + Self.slack, "\(elapsed)")
    held.release()
  }

  /// An open reader's recheck reads the stored mark (it writes nothing): behind a held mark lock
  /// it waits the limit, then reads the record without the lock and judges the clocks against
  /// it, so a clock set back behind the mark is still refused.
  @Test func anOpenReaderBehindAHeldMarkLockJudgesTheRecordReadWithoutIt() throws {
    let fixture = try Fixture()
    defer { fixture.base.root.remove() }
    let reader = try #require(fixture.gate().openOffline().reader)
    let held = try HeldFileLock(fixture.markLock)
    fixture.base.clock.advance(by: .seconds(60))
    let (served, elapsed) = Self.timed {
      Result { () throws(OfflineReadError) in try reader.item(forKey: "token") }
    }
    #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
    #expect((try? served.get())??.payload == Data("secret".utf8), "\(served)")

    fixture.base.clock.moveBack(by: .seconds(120))
    let refused = Result { () throws(OfflineReadError) in try reader.item(forKey: "token") }
    guard case .failure(let error) = refused else {
      Issue.record("served with the clock behind the mark: \(refused)")
      return
    }
    #expect(error.reasons.contains(.clockBehindMark), "\(error)")
    held.release()
  }

  @Test func aSummaryRebuiltFromTheItemsBehindAHeldCacheLockIsRefused() throws {
    let fixture = try Fixture()
    defer { fixture.base.root.remove() }
    // Without an index the summary is read from the item headers under the shared lock.
    try FileManager.default.removeItem(atPath: fixture.base.store + "/cache/index")
    let held = try HeldFileLock(fixture.cacheLock)
    let (decision, elapsed) = Self.timed { fixture.gate().checkEligibility() }
    #expect(decision.status == .expired, "\(decision)")
    #expect(decision.cacheError?.code == .lockTimedOut, "\(decision)")
    #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
    held.release()
  }

  @Test func aSealedKeyCreationBehindAHeldDirectoryLockTimesOut() throws {
    let root = try TemporaryStoreDirectory(prefix: "lock-timeout-key")
    defer { root.remove() }
    let keys = root.appending("keys")
    try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: false)
    var provider = FileSealingKeyProvider(path: keys + "/key")
    provider.lockTimeout = Self.limit
    let held = try HeldFileLock(keys, directory: true)
    let (result, elapsed) = Self.timed {
      Result { () throws(SealingKeyError) in try provider.loadOrCreateKey() }
    }
    #expect(elapsed < Self.limit + Self.slack, "\(elapsed)")
    if case .success = result { Issue.record("a key was loaded behind the held lock") }
    if case .failure(let error) = result {
      #expect(error.code == .lockTimedOut, "\(error)")
      #expect(
        StoreError(sealingKey: error, provider: provider).code == .lockTimedOut,
        "a store reports it as lock_timed_out")
    }
    #expect(!FileManager.default.fileExists(atPath: keys + "/key"), "no key was created")

    // A sealed first sign-in whose key creation waits: refused with the same code.
    let store = root.appending("store")
    var marks = FileClockMarkStore(atPath: store, sealing: provider)
    marks.lockTimeout = Self.limit
    var cache = DirectoryCacheStore(atPath: store, sealing: provider)
    cache.lockTimeout = Self.limit
    let gate = OfflineAccessGate(
      cache: cache, marks: marks, policy: try EligibilityPolicy(maxAge: .seconds(60)))
    let signIn = #expect(throws: OnlineSessionError.self) {
      try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("x".utf8))])
    }
    #expect(signIn?.storeError?.code == .lockTimedOut, "\(String(describing: signIn))")
    #expect(!FileManager.default.fileExists(atPath: keys + "/key"), "no key was created")
    held.release()
  }

  @Test func theDefaultLimitIsThirtySecondsEverywhere() {
    #expect(FileClockMarkStore.defaultLockTimeout == .seconds(30))
    #expect(FileClockMarkStore(atPath: "/nonexistent").lockTimeout == .seconds(30))
    #expect(DirectoryCacheStore(atPath: "/nonexistent").lockTimeout == .seconds(30))
    #expect(FileSealingKeyProvider(path: "/nonexistent/key").lockTimeout == .seconds(30))
    #expect(StoreError.Code.lockTimedOut.description == "lock_timed_out")
    #expect(SealingKeyError.Code.lockTimedOut.description == "key_lock_timed_out")
  }
}

extension OfflineOpenResult {
  /// The reader when opened, else `nil`.
  fileprivate var reader: OfflineCacheReader? {
    if case .opened(let reader) = self { return reader }
    return nil
  }
}
