import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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

  /// A flag set once, from any thread.
  final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Sets the flag; `true` when this call set it (it was clear).
    @discardableResult func set() -> Bool {
      !value.exchange(true, ordering: .acquiringAndReleasing)
    }
    var isSet: Bool { value.load(ordering: .acquiring) }
  }

  /// An item store that counts the summaries started (each check summarizes, then waits for
  /// the mark lock).
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
    func commit(_ changes: CacheChanges, onlyIf precondition: () -> Bool) throws(StoreError)
      -> Bool
    {
      try inner.commit(changes, onlyIf: precondition)
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

    // Hold the mark store's lock as another process would.
    let lockFD = open(directory.appending(FileClockMarkStore.lockFileName), O_RDONLY | O_CLOEXEC)
    try #require(lockFD >= 0)
    defer { close(lockFD) }
    try #require(flock(lockFD, LOCK_EX) == 0)
    // A watchdog releases the lock if the pool were starved, so a failure cannot hang the run
    // (after 60 s: the checks reach the lock in milliseconds, seconds on a loaded machine).
    let released = Flag()
    let watchdogFired = Flag()
    let watchdog = Thread {
      for _ in 0..<1_200 where !released.isSet { usleep(50_000) }
      if released.set() {
        watchdogFired.set()
        flock(lockFD, LOCK_UN)
      }
    }
    watchdog.start()

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
    while summaries.value < waiting, !watchdogFired.isSet {
      try await Task.sleep(for: .milliseconds(5))
    }
    let sentinel = await Task.detached { 42 }.value
    #expect(sentinel == 42)
    let starved = watchdogFired.isSet
    #expect(!starved, "the cooperative pool was blocked")
    if released.set() { flock(lockFD, LOCK_UN) }
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
}
