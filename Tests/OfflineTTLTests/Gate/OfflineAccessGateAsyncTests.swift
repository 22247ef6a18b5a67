import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// The async variants never block a thread of the cooperative pool: with the mark store's lock
/// held by someone else, more async checks than the pool has threads wait for it, and other
/// async work still runs.
@Suite struct OfflineAccessGateAsyncTests {
  /// A thread-safe count.
  final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
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

  @Test func asyncChecksWaitingForTheLockLeaveTheCooperativePoolFree() async throws {
    let directory = try TemporaryStoreDirectory(prefix: "async-gate")
    defer { directory.remove() }
    let summaries = Counter()
    let gate = OfflineAccessGate(
      cache: CountingCache(inner: DirectoryCacheStore(atPath: directory.path), counter: summaries),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600)))
    let session = try await gate.beginOnlineSessionAsync()
    try await session.writeAsync(contentsOf: [("token", Data("secret".utf8))])

    // Hold the mark store's lock as another process would. Released after 60 s if the pool were
    // starved, so a failure cannot hang the run (the checks reach the lock in milliseconds,
    // seconds on a loaded machine).
    let held = try HeldFileLock(directory.appending(FileClockMarkStore.lockFileName))

    let waiting = ProcessInfo.processInfo.activeProcessorCount * 4
    let decisions = Task {
      await withTaskGroup(of: OfflineAccessDecision.self) { group in
        for _ in 0..<waiting { group.addTask { await gate.checkEligibilityAsync() } }
        var all: [OfflineAccessDecision] = []
        for await decision in group { all.append(decision) }
        return all
      }
    }
    // Every check reaches the lock (more than the pool has threads), and this task still runs.
    while summaries.value < waiting, !held.isReleased {
      try await Task.sleep(for: .milliseconds(5))
    }
    let sentinel = await Task.detached { 42 }.value
    #expect(sentinel == 42)
    #expect(held.release(), "the cooperative pool was blocked")
    let all = await decisions.value
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
  @Test func asyncSignInsThatWriteWaitWithoutBlockingThePoolAndAllCommit() async throws {
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

    // Hold the cache's writer lock as another process would; released after 120 s at most, so a
    // starved pool cannot hang the run (wall time: the whole suite running beside this test on
    // a loaded machine took more than 20 s to get here).
    let held = try HeldFileLock(directory.appending("cache/lock"), releasingAfter: .seconds(120))
    clock.advance(by: .seconds(60))
    let waiting = ProcessInfo.processInfo.activeProcessorCount * 4
    let sessions = Task {
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
    try await Task.sleep(for: .milliseconds(200))
    let sentinel = await Task.detached { 42 }.value
    #expect(sentinel == 42)
    #expect(held.release(), "the cooperative pool was blocked")
    let all = await sessions.value
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
