import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// The async variants never block their calling thread: with a store's lock held by someone
/// else, more async calls than their one thread wait for it, and other async work on that
/// thread still runs.
@Suite struct OfflineAccessGateAsyncTests {
  /// A thread-safe count.
  final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
  }

  /// How many async calls wait for a held lock at once: more than the one thread they are
  /// called from.
  static let waiting = 4

  /// Runs `calls` (which make `count` async calls that each wait for `held`'s lock) on a thread
  /// of its own (``OneThreadExecutor``), and on that same thread, after them, a sentinel that
  /// waits until `count` requests wait for the lock in the kernel (`/proc/locks`) and then
  /// releases it. An async call that blocked its calling thread while it waited would keep the
  /// sentinel from running until the watchdog released the lock, and the calls that did not
  /// start yet from reaching the lock: `released` is then `false`.
  ///
  /// Nothing here is timed: the sentinel runs as soon as the thread is free, and the thread is
  /// this test's alone (the shared cooperative pool, where the rest of the suite runs, could
  /// keep a ready task waiting for longer than any bound: the flake this replaces, which
  /// released the lock from the test's own task after a 200 ms sleep, and failed when that task
  /// was not run again before the 120 s watchdog).
  ///
  /// - Returns: What `calls` returned, and whether the sentinel released the lock.
  static func whileWaiting<Result: Sendable>(
    for held: HeldFileLock, count: Int, _ calls: @escaping @Sendable () async -> Result
  ) async -> (result: Result, released: Bool) {
    let executor = OneThreadExecutor()
    defer { executor.stop() }
    let work = Task(executorPreference: executor) { await calls() }
    let sentinel = Task(executorPreference: executor) { () -> Bool in
      while held.waiterCount() < count, !held.isReleased {
        try? await Task.sleep(for: .milliseconds(2))
      }
      return held.release()
    }
    let released = await sentinel.value
    return (await work.value, released)
  }

  /// An item store that counts the summaries started (each check summarizes, then waits for
  /// the mark lock). It implements only the requirements without a default, so every way of
  /// summarizing (`summaryIfSettled()` and the others) reaches the counted `summary()`; a
  /// `ForwardingCacheStore` would pass them to `inner` uncounted.
  struct CountingCache: CacheItemStore {
    let inner: any CacheItemStore
    let counter: Counter
    func summary() throws(StoreError) -> ItemTimeSummary {
      counter.increment()
      return try inner.summary()
    }
    func item(forKey key: CacheItemKey) throws(StoreError) -> CacheItem? {
      try inner.item(forKey: key)
    }
    func keys() throws(StoreError) -> [CacheItemKey] { try inner.keys() }
    func commit(preparing prepare: () -> CacheChanges?) throws(StoreError) -> Bool {
      try inner.commit(preparing: prepare)
    }
    func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
      try inner.withWriterLock(body)
    }
  }

  @Test(
    .enabled(
      if: HeldFileLock.canCountWaiters,
      "needs /proc/locks (Linux procfs) to see the checks wait for the lock"))
  func asyncChecksWaitingForTheLockLeaveTheCooperativePoolFree() async throws {
    let directory = try TemporaryStoreDirectory(prefix: "async-gate")
    defer { directory.remove() }
    let summaries = Counter()
    let gate = OfflineAccessGate(
      cache: CountingCache(inner: DirectoryCacheStore(atPath: directory.path), counter: summaries),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600)))
    let session = try await gate.beginOnlineSessionAsync()
    try await session.writeAsync(contentsOf: [("token", Data("secret".utf8))])

    // Hold the mark store's lock as another process would. The watchdog's bound is a safety
    // net: it releases the lock only if the thread below stays blocked.
    let held = try HeldFileLock(
      directory.appending(FileClockMarkStore.lockFileName), releasingAfter: .seconds(120))
    let waiting = Self.waiting
    let releasedHere = await Self.whileWaiting(for: held, count: waiting) {
      await withTaskGroup(of: OfflineAccessDecision.self) { group in
        for _ in 0..<waiting { group.addTask { await gate.checkEligibilityAsync() } }
        var all: [OfflineAccessDecision] = []
        for await decision in group { all.append(decision) }
        return all
      }
    }
    #expect(releasedHere.released, "a check blocked its thread while it waited for the lock")
    let all = releasedHere.result
    #expect(summaries.value >= waiting, "every check summarized the items")
    #expect(all.count == waiting)
    let fresh = all.filter { $0.isFresh }.count
    #expect(fresh == waiting)

    guard case .opened(let reader) = await gate.openOfflineAsync() else {
      Issue.record("a fresh cache did not open")
      return
    }
    #expect(try await reader.itemAsync(forKey: "token")?.payload == Data("secret".utf8))
    #expect(try await reader.keysAsync() == ["token"])
  }
  /// The async sign-in that writes: one atomic step, stamped under the writer lock; with the
  /// cache's writer lock held by someone else, more of them than the pool has threads wait for
  /// it while other async work runs, and each commits in a generation of its own.
  @Test(
    .enabled(
      if: HeldFileLock.canCountWaiters,
      "needs /proc/locks (Linux procfs) to see the sign-ins wait for the lock"))
  func asyncSignInsThatWriteWaitWithoutBlockingThePoolAndAllCommit() async throws {
    let directory = try TemporaryStoreDirectory(prefix: "async-sign-in")
    defer { directory.remove() }
    let clock = ManualWallClock(GateFixture.start)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: directory.path),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: clock)
    let first = try await gate.beginOnlineSessionAsync(writing: [
      ("token", Data("first".utf8)), ("profile", Data("p".utf8)),
    ])
    #expect(first.generation == 1)
    #expect(first.signInWrittenAt == GateFixture.start)
    #expect(try gate.cache.item(forKey: "profile")?.writtenAt == GateFixture.start)

    // Hold the cache's writer lock as another process would. The watchdog's bound is a safety
    // net: it releases the lock only if the thread below stays blocked.
    let held = try HeldFileLock(directory.appending("cache/lock"), releasingAfter: .seconds(120))
    clock.advance(by: .seconds(60))
    let waiting = Self.waiting
    let sessions = await Self.whileWaiting(for: held, count: waiting) {
      await withTaskGroup(of: OnlineSession?.self) { group in
        for index in 0..<waiting {
          group.addTask {
            try? await gate.beginOnlineSessionAsync(writing: [
              ("token", Data("sign-in \(index)".utf8))
            ])
          }
        }
        var all: [OnlineSession] = []
        for await session in group { all += session.map { [$0] } ?? [] }
        return all
      }
    }
    #expect(sessions.released, "a sign-in blocked its thread while it waited for the lock")
    let all = sessions.result
    #expect(all.count == waiting, "every sign-in commits")
    #expect(Set(all.map(\.generation)) == Set((2...(waiting + 1)).map { UInt64($0) }))
    let last = try #require(all.max { $0.generation < $1.generation })
    let token = try gate.cache.item(forKey: "token")
    #expect(token?.writtenAt == last.signInWrittenAt)
    #expect(gate.checkEligibility().status == .fresh)
  }
  /// The async sign-ins anchored at a server time: the same step as the blocking ones, items
  /// stamped at `serverTime − uncertainty − 2 s` whatever the wall clock says, and a negative
  /// uncertainty refused before anything is written.
  @Test func asyncSignInsAnchoredAtAServerTimeStampWithTrustedTime() async throws {
    let directory = try TemporaryStoreDirectory(prefix: "async-server-time")
    defer { directory.remove() }
    let clock = ManualWallClock(GateFixture.start)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: directory.path),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: clock)
    // The wall clock is a month behind the server.
    let server = GateFixture.start.saturatingAdvanced(by: .seconds(30 * 86_400))
    let first = try await gate.beginOnlineSessionAsync(
      serverTime: server, uncertainty: .milliseconds(250),
      writing: [("token", Data("first".utf8))])
    #expect(first.generation == 1)
    let stamp = server.saturatingAdvanced(by: .zero - .milliseconds(250) - .seconds(2))
    #expect(first.signInWrittenAt == stamp)
    #expect(try gate.cache.item(forKey: "token")?.writtenAt == stamp)

    let second = try await gate.beginOnlineSessionAsync(serverTime: server, uncertainty: .zero)
    #expect(second.generation == 2)
    #expect(try gate.cache.item(forKey: "token")?.payload == Data("first".utf8), "items kept")

    let refused = await #expect(throws: OnlineSessionError.self) {
      try await gate.beginOnlineSessionAsync(
        serverTime: server, uncertainty: .seconds(-1), writing: [("token", Data("no".utf8))])
    }
    #expect(refused?.code == .invalidServerTime)
    #expect(try gate.cache.item(forKey: "token")?.payload == Data("first".utf8))
    #expect(try gate.marks.read().generation == 2, "nothing written")
  }
}
