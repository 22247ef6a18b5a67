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

/// Every reading of a clock that the gate or a reader compares with a clock mark is taken under
/// the mark store's lock, or after the stored mark was read in the same call. A clock double
/// records, at each reading, whether the lock was held and whether a stored mark had been read;
/// every public offline path (and the sign-in) is driven through it.
@Suite struct ClockUnderMarkLockTests {
  /// What one clock reading saw.
  struct Reading: Sendable, CustomStringConvertible {
    var clock: String
    var lockHeld: Bool
    var markReadBefore: Bool
    var isSafe: Bool { lockHeld || markReadBefore }
    var description: String {
      "\(clock) reading (lock \(lockHeld ? "held" : "free"), "
        + "stored mark \(markReadBefore ? "read before" : "not read yet"))"
    }
  }

  /// The shared record of one public call.
  final class Witness: Sendable {
    private struct State {
      var readings: [Reading] = []
      var marksRead = 0
      var insideStoreOperation = 0
    }
    private let state = Mutex(State())
    /// Probes the store's real lock, when it has one (the file store's `flock`).
    let probe: (@Sendable () -> Bool)?

    init(probe: (@Sendable () -> Bool)?) { self.probe = probe }

    func startCall() { state.withLock { $0 = State() } }
    func markRead() { state.withLock { $0.marksRead += 1 } }
    func enterStore() { state.withLock { $0.insideStoreOperation += 1 } }
    func leaveStore() { state.withLock { $0.insideStoreOperation -= 1 } }
    func clockRead(_ clock: String) {
      let probed = probe?()
      state.withLock {
        $0.readings.append(
          Reading(
            clock: clock, lockHeld: probed ?? ($0.insideStoreOperation > 0),
            markReadBefore: $0.marksRead > 0))
      }
    }
    var readings: [Reading] { state.withLock { $0.readings } }
  }

  /// A wall clock that reports each reading to the witness.
  final class WitnessWallClock: WallClock {
    let base = ManualWallClock(GateFixture.start)
    let witness: Witness
    init(_ witness: Witness) { self.witness = witness }
    func now() -> WallClockInstant {
      witness.clockRead("wall")
      return base.now()
    }
  }

  /// A boot clock that reports each reading to the witness.
  final class WitnessBootClock: BootClock {
    let base = ManualBootClock(bootID: BootID(high: 3, low: 3), sinceBoot: .seconds(100))
    let witness: Witness
    init(_ witness: Witness) { self.witness = witness }
    func now() -> BootClockReading? {
      witness.clockRead("boot")
      return base.now()
    }
  }

  /// A mark store that forwards to another and tells the witness while one of its locked
  /// operations runs (the clocks closure runs inside it), and when a stored record was read or
  /// an operation's attempt to read it ended (a reading after a failed read follows the store's
  /// answer, so it cannot be older than a mark found there).
  struct WitnessMarkStore: ClockMarkStore {
    let inner: any ClockMarkStore
    let witness: Witness

    func read() throws(ClockMarkStoreError) -> ClockMarkRecord {
      defer { witness.markRead() }
      return try inner.read()
    }

    func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
      throws(ClockMarkStoreError) -> ClockMarkTransition
    {
      defer { witness.markRead() }
      return try inner.observe(resolution: resolution, readingClocks: { witnessed(clocks) })
    }

    func createFirstMark(readingClocks clocks: () -> ClockObservation)
      throws(ClockMarkStoreError) -> ClockMarkRecord
    {
      defer { witness.markRead() }
      return try inner.createFirstMark(readingClocks: { witnessed(clocks) })
    }

    func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
      throws(ClockMarkStoreError) -> ClockMarkRecord
    {
      defer { witness.markRead() }
      return try inner.resetAfterOnlineSignIn(readingClocks: { witnessed(clocks) })
    }

    private func witnessed(_ clocks: () -> ClockObservation) -> ClockObservation {
      witness.enterStore()
      defer { witness.leaveStore() }
      return clocks()
    }
  }

  enum Backend: String, CaseIterable, CustomStringConvertible {
    case memory, files
    var description: String { rawValue }
  }

  /// A gate over witnessed clocks and a witnessed mark store.
  struct Setup {
    let witness: Witness
    let wall: WitnessWallClock
    let boot: WitnessBootClock
    let inner: any ClockMarkStore
    let cache: any CacheItemStore
    let gate: OfflineAccessGate
    let directory: TemporaryStoreDirectory

    init(_ backend: Backend, trustOnFirstUse: Bool = false, floor: Bool = true) throws {
      directory = try TemporaryStoreDirectory(prefix: "witness")
      let lockPath = directory.appending(FileClockMarkStore.lockFileName)
      switch backend {
      case .memory:
        witness = Witness(probe: nil)
        inner = InMemoryClockMarkStore()
        cache = InMemoryCacheStore()
      case .files:
        witness = Witness(probe: { Self.isLocked(lockPath) })
        inner = FileClockMarkStore(atPath: directory.path)
        cache = DirectoryCacheStore(atPath: directory.path)
      }
      wall = WitnessWallClock(witness)
      boot = WitnessBootClock(witness)
      let policy = try EligibilityPolicy(
        maxAge: .seconds(86_400), trustOnFirstUse: trustOnFirstUse, usesBootClockFloor: floor,
        markResolution: .zero)
      gate = OfflineAccessGate(
        cache: cache, marks: WitnessMarkStore(inner: inner, witness: witness), policy: policy,
        clock: wall, bootClock: boot)
    }

    /// Whether another open file description holds `flock` on the lock file.
    static func isLocked(_ path: String) -> Bool {
      let fd = open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { return false }
      defer { close(fd) }
      if flock(fd, LOCK_EX | LOCK_NB) == 0 {
        flock(fd, LOCK_UN)
        return false
      }
      return errno == EWOULDBLOCK
    }

    /// Runs one public call and returns what each clock reading saw.
    func witnessed(_ call: () throws -> Void) rethrows -> [Reading] {
      witness.startCall()
      try call()
      return witness.readings
    }

    func signIn() throws {
      try gate.beginOnlineSession().write(CacheItemKey("token"), Data("secret".utf8))
    }
  }

  /// Every public path of the gate, the reader and the sign-in, each with the readings it took.
  static func everyPath(_ backend: Backend) throws -> [(String, [Reading])] {
    var paths: [(String, [Reading])] = []
    let s = try Setup(backend)
    defer { s.directory.remove() }
    paths.append(("beginOnlineSession", try s.witnessed { try s.signIn() }))
    paths.append(("checkEligibility", s.witnessed { _ = s.gate.checkEligibility() }))
    paths.append(("recordObservation", try s.witnessed { try s.gate.recordObservation() }))
    var reader: OfflineCacheReader?
    paths.append(
      ("openOffline", s.witnessed { reader = s.gate.openOffline().reader }))
    let opened = try #require(reader)
    paths.append(("reader.checkStillFresh", try s.witnessed { try opened.checkStillFresh() }))
    paths.append(
      ("reader.item", try s.witnessed { _ = try opened.item(forKey: CacheItemKey("token")) }))
    paths.append(("reader.keys", try s.witnessed { _ = try opened.keys() }))
    // A refusal that still observes: the clock set back an hour.
    s.wall.base.advance(by: .seconds(-3_600))
    paths.append(("checkEligibility (rollback)", s.witnessed { _ = s.gate.checkEligibility() }))
    paths.append(("reader.item (rollback)", s.witnessed { _ = try? opened.keys() }))

    // No items: unavailable.
    let empty = try Setup(backend)
    defer { empty.directory.remove() }
    _ = try empty.gate.beginOnlineSession()
    paths.append(
      ("checkEligibility (no items)", empty.witnessed { _ = empty.gate.checkEligibility() }))

    // Items without a mark: refused, then trust on first use.
    for trust in [false, true] {
      let first = try Setup(backend, trustOnFirstUse: trust)
      defer { first.directory.remove() }
      var changes = CacheChanges()
      changes.write(CacheItemKey("token"), Data("x".utf8), writtenAt: GateFixture.start)
      _ = try first.cache.commit(changes) { true }
      paths.append(
        (
          "checkEligibility (no mark, trust on first use \(trust))",
          first.witnessed { _ = first.gate.checkEligibility() }
        ))
    }
    return paths
  }

  @Test(arguments: Backend.allCases)
  func everyClockReadingIsUnderTheLockOrAfterTheStoredMark(_ backend: Backend) throws {
    let paths = try Self.everyPath(backend)
    var unsafe = 0
    var total = 0
    for (name, readings) in paths {
      total += readings.count
      for reading in readings where !reading.isSafe {
        unsafe += 1
        Issue.record("\(name): \(reading)")
      }
    }
    print(
      "clock readings, \(backend): \(unsafe) of \(total) neither under the lock nor after the mark")
    #expect(total > paths.count, "every path read a clock")
  }
}

extension OfflineOpenResult {
  fileprivate var reader: OfflineCacheReader? {
    if case .opened(let reader) = self { return reader }
    return nil
  }
}
