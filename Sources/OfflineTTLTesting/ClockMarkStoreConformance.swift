import Dispatch
import OfflineTTL
import Synchronization
import Testing

/// The conformance suite every `ClockMarkStore` must pass (the requirements listed on the
/// protocol). Call it from a `@Test` with a factory for your backend; failures are recorded with
/// Swift Testing's `#expect` against the calling test.
///
/// ```swift
/// @Test func fileStoreConforms() throws {
///   try ClockMarkStoreConformance.run(
///     ClockMarkStoreConformance.Backend(
///       makeEmpty: { FileClockMarkStore(atPath: try TemporaryStoreDirectory().path) },
///       reopen: { FileClockMarkStore(atPath: ($0 as! FileClockMarkStore).directoryPath) },
///       corrupt: { ... write garbage over the record ... }))
/// }
/// ```
///
/// What it checks: absent on a new store and `observe` creating nothing; `createFirstMark`
/// (generation 0, an existing record untouched); `observe` advancing to `max(stored, now)` exactly
/// as `ClockMarkRecord/observing(_:)` does, never lowering the mark; the mark resolution
/// (`ClockMarkRecord/needsWrite(becoming:resolution:)`, zero = write always); the boot-clock
/// floor carried through storage unchanged; `resetAfterOnlineSignIn` (generation + 1, a lower mark
/// allowed, working over absent and unreadable records); an unreadable record left alone by
/// `observe` and `createFirstMark`; typed errors; and 8 threads observing at once (half through
/// the shared instance, half through reopened ones) ending at the maximum; and
/// `observe(readingClocks:)` reading the clocks exactly once, under the lock (8 threads whose
/// clock is one shared counter never see a stored mark ahead of their own reading).
public enum ClockMarkStoreConformance {
  /// How to make and inspect the backend under test.
  public struct Backend: Sendable {
    /// Makes a new, empty store (no record), independent of every other one.
    public var makeEmpty: @Sendable () throws -> any ClockMarkStore
    /// Returns another handle on the same storage (another instance over the same directory or
    /// service entry); the identity for backends with no such notion.
    public var reopen: @Sendable (any ClockMarkStore) throws -> any ClockMarkStore
    /// Makes the stored record unreadable (garbage over it), or `nil` when the backend cannot
    /// be corrupted from outside (those checks are then skipped).
    public var corrupt: (@Sendable (any ClockMarkStore) throws -> Void)?
    /// Releases what `makeEmpty` made (removes a directory), if anything.
    public var cleanUp: @Sendable (any ClockMarkStore) -> Void

    /// Creates a backend description.
    ///
    /// - Parameters:
    ///   - makeEmpty: Makes a new, empty store.
    ///   - reopen: Another handle on the same storage; default the same instance.
    ///   - corrupt: Makes the record unreadable; default `nil` (checks skipped).
    ///   - cleanUp: Releases a store; default nothing.
    public init(
      makeEmpty: @escaping @Sendable () throws -> any ClockMarkStore,
      reopen: @escaping @Sendable (any ClockMarkStore) throws -> any ClockMarkStore = { $0 },
      corrupt: (@Sendable (any ClockMarkStore) throws -> Void)? = nil,
      cleanUp: @escaping @Sendable (any ClockMarkStore) -> Void = { _ in }
    ) {
      self.makeEmpty = makeEmpty
      self.reopen = reopen
      self.corrupt = corrupt
      self.cleanUp = cleanUp
    }
  }

  /// Runs every check, each on a fresh store.
  ///
  /// - Parameters:
  ///   - backend: The backend under test.
  ///   - threadObservations: Observations per thread in the concurrency check (8 threads).
  /// - Throws: An unexpected error from the backend (a failed `#require`, or an error where
  ///   success was required).
  public static func run(_ backend: Backend, threadObservations: Int = 25) throws {
    let checks: [(String, (any ClockMarkStore, Backend) throws -> Void)] = [
      ("absent", checkAbsent),
      ("createFirstMark", checkCreateFirstMark),
      ("observe", checkObserve),
      ("markResolution", checkMarkResolution),
      ("bootClockFloor", checkFloorRoundTrip),
      ("reset", checkReset),
      ("unreadable", checkUnreadable),
      ("threads", { store, backend in try checkThreads(store, backend, threadObservations) }),
      (
        "clocksUnderLock",
        { store, backend in
          try checkClocksReadUnderLock(store, backend, threadObservations)
        }
      ),
    ]
    for (name, check) in checks {
      let store = try backend.makeEmpty()
      defer { backend.cleanUp(store) }
      do {
        try check(store, backend)
      } catch {
        Issue.record("conformance check '\(name)' threw \(error)")
      }
    }
  }

  static func t(_ seconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: seconds &* 1_000_000_000)
  }

  static func expectCode(
    _ code: StoreError.Code, _ check: String, _ body: () throws -> Void
  ) {
    do {
      try body()
      Issue.record("\(check): expected \(code), got success")
    } catch let error as StoreError {
      #expect(error.code == code, "\(check): \(error)")
    } catch {
      Issue.record("\(check): expected a StoreError, got \(error)")
    }
  }

  static func checkClocksReadUnderLock(
    _ store: any ClockMarkStore, _ backend: Backend, _ perThread: Int
  ) throws {
    let reads = Atomic<Int>(0)
    expectCode(.absent, "observe(readingClocks:) on a new store") {
      _ = try store.observe(readingClocks: {
        reads.add(1, ordering: .relaxed)
        return ClockObservation(wall: t(1))
      })
    }
    #expect(reads.load(ordering: .relaxed) == 0, "clocks are not read when the record is absent")
    _ = try store.resetAfterOnlineSignIn(now: t(0))
    let once = try store.observe(readingClocks: {
      reads.add(1, ordering: .relaxed)
      return ClockObservation(wall: t(7))
    })
    #expect(reads.load(ordering: .relaxed) == 1, "clocks are read exactly once")
    #expect(once.observation.wall == t(7) && once.current.mark == t(7))
    // A clock that every thread shares and that only moves forward: read under the lock, each
    // reading is later than every mark stored before it, so no observation sees a "rollback".
    let counter = Atomic<Int64>(7)
    let behind = Atomic<Int>(0)
    let handles = try (0..<8).map { $0 % 2 == 0 ? store : try backend.reopen(store) }
    runConcurrently(8) { index in
      for _ in 0..<perThread {
        guard
          let transition = try? handles[index].observe(readingClocks: {
            ClockObservation(wall: t(counter.add(1, ordering: .sequentiallyConsistent).newValue))
          })
        else { continue }
        if transition.observation.wall < transition.previous.mark {
          behind.add(1, ordering: .relaxed)
        }
      }
    }
    #expect(
      behind.load(ordering: .relaxed) == 0,
      "a clock read under the lock is never behind the mark another thread stored")
    #expect(try store.read().mark == t(counter.load(ordering: .sequentiallyConsistent)))
  }

  static func checkAbsent(_ store: any ClockMarkStore, _ backend: Backend) throws {
    expectCode(.absent, "read on a new store") { _ = try store.read() }
    expectCode(.absent, "observe on a new store") { _ = try store.observe(now: t(100)) }
    expectCode(.absent, "observe must create nothing") { _ = try store.read() }
  }

  static func checkCreateFirstMark(_ store: any ClockMarkStore, _ backend: Backend) throws {
    let first = try store.createFirstMark(now: t(1_000))
    #expect(first.generation == 0, "createFirstMark writes generation 0")
    #expect(first.mark == t(1_000))
    let again = try backend.reopen(store).createFirstMark(now: t(5_000))
    #expect(again == first, "createFirstMark leaves an existing record untouched")
    #expect(try store.read() == first)
  }

  static func checkObserve(_ store: any ClockMarkStore, _ backend: Backend) throws {
    _ = try store.resetAfterOnlineSignIn(now: t(1_000))
    var expected = try store.read()
    for now in [1_001, 5_000, 4_000, 5_000, -3, 9_000, 8_999] as [Int64] {
      let observation = ClockObservation(wall: t(now))
      let transition = try backend.reopen(store).observe(observation)
      #expect(transition.previous == expected, "observe reports the stored record as previous")
      let next = expected.observing(observation)
      #expect(transition.current == next, "observe advances exactly as the pure function")
      #expect(transition.current.mark >= transition.previous.mark, "the mark never decreases")
      #expect(try store.read() == next, "observe is durable before it returns")
      expected = next
    }
    #expect(expected.mark == t(9_000))
    #expect(expected.generation == 1)
  }

  static func checkMarkResolution(_ store: any ClockMarkStore, _ backend: Backend) throws {
    _ = try store.resetAfterOnlineSignIn(now: t(1_000))
    let small = try store.observe(
      ClockObservation(wall: t(1_000).saturatingAdvanced(by: .milliseconds(300))),
      resolution: .seconds(1))
    #expect(!small.wrote, "a rise below the resolution is not written")
    #expect(try store.read().mark == t(1_000))
    let zero = try store.observe(
      ClockObservation(wall: t(1_000).saturatingAdvanced(by: .nanoseconds(1))))
    #expect(zero.wrote, "resolution zero writes every rise")
    #expect(try store.read().mark == t(1_000).saturatingAdvanced(by: .nanoseconds(1)))
    let big = try store.observe(ClockObservation(wall: t(1_002)), resolution: .seconds(1))
    #expect(big.wrote)
    #expect(try store.read().mark == t(1_002))
  }

  static func checkFloorRoundTrip(_ store: any ClockMarkStore, _ backend: Backend) throws {
    let boot = BootID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
    let signIn = ClockObservation(
      wall: t(1_000), boot: BootClockReading(bootID: boot, sinceBoot: .seconds(50)))
    let written = try store.resetAfterOnlineSignIn(signIn)
    #expect(
      written == ClockMarkRecord.afterOnlineSignIn(generation: written.generation, at: signIn))
    let later = ClockObservation(
      wall: t(900), boot: BootClockReading(bootID: boot, sinceBoot: .seconds(80)))
    let transition = try store.observe(later)
    #expect(transition.current == written.observing(later))
    #expect(transition.current.floor.lowerBound == t(1_030), "the floor rides the boot clock")
    let backward = ClockObservation(
      wall: t(1_100), boot: BootClockReading(bootID: boot, sinceBoot: .seconds(10)))
    let untrusted = try store.observe(backward)
    #expect(untrusted.current.floor.isUntrusted, "a boot clock going backward is recorded")
    #expect(try backend.reopen(store).read() == untrusted.current)
  }

  static func checkReset(_ store: any ClockMarkStore, _ backend: Backend) throws {
    let first = try store.resetAfterOnlineSignIn(now: t(10_000))
    #expect(first.generation >= 1, "reset over an absent record writes generation >= 1")
    _ = try store.observe(now: t(20_000))
    let second = try store.resetAfterOnlineSignIn(now: t(5))
    #expect(second.generation == first.generation + 1, "reset increments the generation")
    #expect(second.mark == t(5), "reset may lower the mark")
    #expect(try backend.reopen(store).read() == second)
    #expect(try store.observe(now: t(4)).current.mark == t(5))
  }

  static func checkUnreadable(_ store: any ClockMarkStore, _ backend: Backend) throws {
    guard let corrupt = backend.corrupt else { return }
    _ = try store.resetAfterOnlineSignIn(now: t(1_000))
    try corrupt(store)
    expectCode(.unreadable, "read of a corrupt record") { _ = try store.read() }
    expectCode(.unreadable, "observe of a corrupt record") { _ = try store.observe(now: t(2_000)) }
    expectCode(.unreadable, "createFirstMark over a corrupt record") {
      _ = try store.createFirstMark(now: t(2_000))
    }
    expectCode(.unreadable, "the corrupt record is still there") { _ = try store.read() }
    let reset = try store.resetAfterOnlineSignIn(now: t(3_000))
    #expect(reset.generation >= 1)
    #expect(try store.read() == reset, "reset replaces an unreadable record")
  }

  static func checkThreads(_ store: any ClockMarkStore, _ backend: Backend, _ count: Int) throws {
    _ = try store.resetAfterOnlineSignIn(now: t(0))
    let handles = try (0..<8).map { index in index % 2 == 0 ? store : try backend.reopen(store) }
    let failures = Mutex([String]())
    let maximum = Mutex(WallClockInstant.min)
    runConcurrently(8) { index in
      var generator = SystemRandomNumberGenerator()
      var seen = WallClockInstant.min
      for _ in 0..<count {
        let now = t(Int64.random(in: 1...1_000_000, using: &generator))
        do {
          let transition = try handles[index].observe(now: now)
          maximum.withLock { $0 = Swift.max($0, now) }
          if transition.current.mark < seen || transition.current.mark < now {
            failures.withLock { $0.append("thread \(index) saw the mark go down") }
          }
          seen = transition.current.mark
        } catch {
          failures.withLock { $0.append("thread \(index): \(error)") }
        }
      }
    }
    #expect(failures.withLock { $0 } == [], "concurrent observations")
    #expect(try store.read().mark == maximum.withLock { $0 }, "the final mark is the maximum")
  }
}
