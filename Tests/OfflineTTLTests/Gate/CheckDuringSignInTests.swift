import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// A check that meets an online sign-in between its two reads (the items and the mark) judges
/// one state, before or after that sign-in, never a mix of both: before the gate judged again, a
/// check during the very first sign-in paired "no mark yet" with the items that sign-in then
/// committed (`expired`, `mark_missing`, sometimes `item_from_future`), and an item failure the
/// sign-in cured (its new sealing key) with the mark it wrote. Each case forces the interleaving
/// with a store that runs a complete sign-in, on another thread, at one point of the check.
@Suite struct CheckDuringSignInTests {
  /// A mark store that forwards to another and, once, runs `hook` just after an observation
  /// (whatever it returned or threw), before the gate goes on.
  final class HookedMarkStore: ClockMarkStore, @unchecked Sendable {
    let inner: any ClockMarkStore
    private let hook = Mutex<(@Sendable () -> Void)?>(nil)

    /// When set, every mark reset fails before touching the store.
    nonisolated(unsafe) var failResets = false

    init(_ inner: any ClockMarkStore) { self.inner = inner }

    func onceAfterTheNextObservation(_ body: @escaping @Sendable () -> Void) {
      hook.withLock { $0 = body }
    }

    private func runHook() {
      hook.withLock { hook -> (@Sendable () -> Void)? in
        defer { hook = nil }
        return hook
      }?()
    }

    func read() throws(StoreError) -> ClockMarkRecord { try inner.read() }

    func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkTransition
    {
      defer { runHook() }
      return try inner.observe(resolution: resolution, readingClocks: clocks)
    }

    func createFirstMark(readingClocks clocks: () -> ClockObservation) throws(StoreError)
      -> ClockMarkRecord
    {
      try inner.createFirstMark(readingClocks: clocks)
    }

    func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation) throws(StoreError)
      -> ClockMarkRecord
    {
      if failResets { throw StoreError(code: .writeFailed, message: "forced by the test") }
      return try inner.resetAfterOnlineSignIn(readingClocks: clocks)
    }

    func checkBeforeOnlineSignIn() throws(StoreError) { try inner.checkBeforeOnlineSignIn() }
  }

  /// A cache store whose next settled summary fails once with `error`, then forwards.
  final class FailingOnceCacheStore: ForwardingCacheStore, @unchecked Sendable {
    let base: any CacheItemStore
    private let failure = Mutex<StoreError?>(nil)

    init(_ base: any CacheItemStore) { self.base = base }

    func failNextSummary(with error: StoreError) { failure.withLock { $0 = error } }

    func summaryIfSettledDeferringBinding() throws(StoreError)
      -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
    {
      if let error = failure.withLock({ failure -> StoreError? in
        defer { failure = nil }
        return failure
      }) {
        throw error
      }
      return try base.summaryIfSettledDeferringBinding()
    }
  }

  typealias Fixture = DirectoryGateFixture

  /// The tester's case: the check finds the first sign-in's staging (not settled) and no mark;
  /// that sign-in commits before the check reads the items. Before: `expired`, `mark_missing`.
  @Test(arguments: [false, true])
  func aCheckDuringTheFirstSignInJudgesTheStateAfterIt(sealed: Bool) throws {
    let fixture = try Fixture(prefix: "check-during-sign-in", sealed: sealed)
    try fixture.firstSignInBeforeItsCommitPoint()
    #expect(throws: StoreError.self) {
      _ = try FileClockMarkStore(atPath: fixture.store, sealing: fixture.provider).read()
    }
    let marks = HookedMarkStore(
      FileClockMarkStore(atPath: fixture.store, sealing: fixture.provider))
    marks.onceAfterTheNextObservation { fixture.signInOnAnotherThread("b") }
    let decision = fixture.gate(marks: marks).checkEligibility()
    #expect(decision.status == .fresh, "\(decision.reasons)")
    #expect(decision.reasons.isEmpty)
  }

  /// An item failure that a sign-in cures before the check observes the mark (here: the items
  /// could not be read, then the sign-in wrote a new set and its mark) is judged again from the
  /// start. Before: `expired` with the stale failure beside the new mark.
  @Test(arguments: [false, true])
  func anItemFailureCuredByASignInIsJudgedAgain(sealed: Bool) throws {
    let fixture = try Fixture(prefix: "check-during-sign-in", sealed: sealed)
    fixture.signInOnAnotherThread("a")
    let cache = FailingOnceCacheStore(
      DirectoryCacheStore(atPath: fixture.store, sealing: fixture.provider))
    cache.failNextSummary(
      with: StoreError(code: .keyUnavailable, message: "no key yet (forced by the test)"))
    let marks = HookedMarkStore(
      FileClockMarkStore(atPath: fixture.store, sealing: fixture.provider))
    marks.onceAfterTheNextObservation { fixture.signInOnAnotherThread("b") }
    let decision = fixture.gate(cache: cache, marks: marks).checkEligibility()
    #expect(decision.status == .fresh, "\(decision.reasons)")
  }

  /// A failure that stays is still judged (and refused) after one more look, not retried
  /// without end: the check ends with the failure and its reason.
  @Test func aFailureThatStaysIsRefused() throws {
    let fixture = try Fixture(prefix: "check-during-sign-in", sealed: false)
    fixture.signInOnAnotherThread("a")
    let cache = FailingOnceCacheStore(DirectoryCacheStore(atPath: fixture.store))
    let persistent = StoreError(code: .itemUnreadable, message: "forced by the test")
    cache.failNextSummary(with: persistent)
    let marks = HookedMarkStore(FileClockMarkStore(atPath: fixture.store))
    // The hook makes the failure stay: the next summary fails again.
    marks.onceAfterTheNextObservation { cache.failNextSummary(with: persistent) }
    let decision = fixture.gate(cache: cache, marks: marks).checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.itemUnreadable), "\(decision.reasons)")
  }
}

extension DirectoryGateFixture {
  /// A complete sign-in through a gate of its own, on a thread of its own (outside the
  /// check's task-local scopes, as another thread or process would be).
  fileprivate func signInOnAnotherThread(_ value: String) {
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<String?>(nil)
    let gate = self.gate()
    Thread.detachNewThread {
      do {
        _ = try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data(value.utf8))])
      } catch {
        failure.withLock { $0 = "\(error)" }
      }
      done.signal()
    }
    done.wait()
    #expect(failure.withLock { $0 } == nil)
  }

  /// The state of a store during its first sign-in, before the commit point: the sign-in
  /// staged its items (`cache/pending` is there) and no mark record exists yet. Made by a
  /// first sign-in whose mark reset (its commit point) fails before writing anything.
  fileprivate func firstSignInBeforeItsCommitPoint() throws {
    let marks = CheckDuringSignInTests.HookedMarkStore(
      FileClockMarkStore(atPath: store, sealing: provider))
    marks.failResets = true
    #expect(throws: OnlineSessionError.self) {
      _ = try gate(marks: marks).beginOnlineSession(
        writing: [(try CacheItemKey("token"), Data("a".utf8))])
    }
    #expect(FileManager.default.fileExists(atPath: store + "/cache/pending"))
  }
}
