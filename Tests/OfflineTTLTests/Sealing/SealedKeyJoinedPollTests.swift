import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// A repeated sealed check whose key file is watched (a remembered key on a local file system):
/// the store's shared change watch polls the key file's watch in its own `poll`, so the check
/// makes one `poll` for the store and the key, and the key's load in that check makes no system
/// call. Every change to the key file between two checks is still seen by the next check, with
/// the outcome a new gate gives, and a change that the store's `poll` took is not lost to a
/// later load outside a check.
@Suite struct SealedKeyJoinedPollTests {
  typealias Fixture = SealedStoreTests.Fixture

  static let watchAvailable = StoreChangeWatchTests.watchAvailable

  /// A gate over `f`'s store whose stores and key provider keep one plan each, all allowing a
  /// change watch (as production does); the provider remembers a key at once.
  func gate(
    _ f: Fixture, cacheFaults: SyscallFaultPlan = SyscallFaultPlan(allowsChangeWatch: true),
    markFaults: SyscallFaultPlan = SyscallFaultPlan(allowsChangeWatch: true),
    provider: FileSealingKeyProvider
  ) throws -> OfflineAccessGate {
    OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: f.store, faults: cacheFaults, sealing: provider),
      marks: FileClockMarkStore(atPath: f.store, faults: markFaults, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
  }

  func provider(
    _ f: Fixture, _ faults: SyscallFaultPlan = SyscallFaultPlan(allowsChangeWatch: true)
  )
    -> FileSealingKeyProvider
  {
    FileSealingKeyProvider(path: f.keyPath, faults: faults, settle: .zero)
  }

  /// The code of the store error behind a check that is not fresh, or `"fresh"`.
  static func outcome(_ gate: OfflineAccessGate) -> String {
    let decision = gate.checkEligibility()
    if decision.isFresh { return "fresh" }
    return (decision.cacheError ?? decision.markError).map { "\($0.code)" }
      ?? "\(decision.reasons)"
  }

  /// A gate over `f`'s store, signed in with one item, whose stores and key provider trace
  /// into a plan each; warmed by three fresh checks (the stores keep their descriptors open,
  /// the provider remembers the key, the watches are set up).
  struct Warmed {
    let gate: OfflineAccessGate
    let provider: FileSealingKeyProvider
    let cacheFaults: SyscallFaultPlan
    let markFaults: SyscallFaultPlan
    let keyFaults: SyscallFaultPlan
  }

  func warmedGate(_ f: Fixture) throws -> Warmed {
    try f.signIn(["token": "value"])
    let cacheFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let markFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let keyFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let provider = provider(f, keyFaults)
    let gate = try gate(
      f, cacheFaults: cacheFaults, markFaults: markFaults, provider: provider)
    for _ in 0..<3 { #expect(Self.outcome(gate) == "fresh") }
    return Warmed(
      gate: gate, provider: provider, cacheFaults: cacheFaults, markFaults: markFaults,
      keyFaults: keyFaults)
  }

  static func writeKey(_ path: String, byte: UInt8, mode: Int = 0o600) throws {
    let other = path + ".new"
    #expect(
      FileManager.default.createFile(
        atPath: other, contents: Data(repeating: byte, count: 32),
        attributes: [.posixPermissions: mode]))
    #expect(rename(other, path) == 0)
  }

  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func aRepeatedCheckPollsTheStoreAndTheKeyOnce() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let w = try warmedGate(f)
    let (gate, cacheFaults, markFaults, keyFaults) = (
      w.gate, w.cacheFaults, w.markFaults, w.keyFaults
    )
    for _ in 0..<3 {
      for plan in [cacheFaults, markFaults, keyFaults] { plan.resetCounts() }
      #expect(gate.checkEligibility().isFresh)
      #expect(cacheFaults.count(of: .poll) == 1, "one poll for both: \(cacheFaults.trace)")
      #expect(markFaults.trace.isEmpty, "the same check: \(markFaults.trace)")
      #expect(keyFaults.trace.isEmpty, "the key's load made no call: \(keyFaults.trace)")
    }
  }

  /// Each change to the key file between two repeated checks, the outcome the next check must
  /// give being a new gate's (the full path's), and whether that is a refusal.
  static let changes: [(name: String, refused: Bool, change: @Sendable (Fixture) throws -> Void)] =
    [
      ("another key renamed over it", true, { f in try writeKey(f.keyPath, byte: 7) }),
      (
        "rewritten in place", true,
        { f in
          let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: f.keyPath))
          try handle.write(contentsOf: Data(repeating: 8, count: 32))
          try handle.close()
        }
      ),
      ("made readable by others", true, { f in #expect(chmod(f.keyPath, 0o644) == 0) }),
      ("removed", true, { f in try FileManager.default.removeItem(atPath: f.keyPath) }),
      (
        "the same bytes renamed over it", false,
        { f in
          let bytes = try Data(contentsOf: URL(fileURLWithPath: f.keyPath))
          try writeKey(f.keyPath, byte: bytes[0])
          let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: f.keyPath))
          try handle.write(contentsOf: bytes)
          try handle.close()
        }
      ),
    ]

  @Test(
    .enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"),
    arguments: changes.indices)
  func aKeyChangedBetweenRepeatedChecksGivesTheFullPathsOutcome(_ index: Int) throws {
    let change = Self.changes[index]
    let f = try Fixture()
    defer { f.root.remove() }
    let w = try warmedGate(f)
    let (gate, cacheFaults) = (w.gate, w.cacheFaults)
    let original = try Data(contentsOf: URL(fileURLWithPath: f.keyPath))
    cacheFaults.resetCounts()
    #expect(Self.outcome(gate) == "fresh")
    #expect(cacheFaults.count(of: .poll) == 1, "the joined poll is in use: \(cacheFaults.trace)")
    try change.change(f)
    let expected = Self.outcome(try self.gate(f, provider: provider(f)))
    #expect((expected != "fresh") == change.refused, "\(change.name): a new gate gives \(expected)")
    #expect(Self.outcome(gate) == expected, "\(change.name)")
    #expect(Self.outcome(gate) == expected, "\(change.name), again")
    // The original key back: fresh again.
    try? FileManager.default.removeItem(atPath: f.keyPath)
    #expect(
      FileManager.default.createFile(
        atPath: f.keyPath, contents: original, attributes: [.posixPermissions: 0o600]))
    #expect(Self.outcome(gate) == "fresh", "\(change.name), the original key back")
  }

  /// A change of the key file that the store's joined `poll` took (drained) is not lost: a
  /// load of the same provider outside any check reads the new key, and so does the next check.
  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func aChangeTakenByTheStoresPollIsNotLostToALaterLoad() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let w = try warmedGate(f)
    let (gate, provider, keyFaults) = (w.gate, w.provider, w.keyFaults)
    #expect(try provider.loadKey().bytes != [UInt8](repeating: 7, count: 32))
    try Self.writeKey(f.keyPath, byte: 7)
    // The check's one poll takes the key's events (its answer: the new key seals nothing here).
    #expect(Self.outcome(gate) == "\(StoreError.Code.sealMismatch)")
    keyFaults.resetCounts()
    #expect(try provider.loadKey().bytes == [UInt8](repeating: 7, count: 32))
    #expect(keyFaults.count(of: .poll) == 1, "the new key's watch: \(keyFaults.trace)")
  }

  /// What a check's joined `poll` found serves only the loads of that check: a load after it,
  /// outside any check, polls for itself and sees a change made in between.
  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func aJoinedAnswerServesOnlyItsOwnCheck() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let w = try warmedGate(f)
    let (gate, provider, keyFaults) = (w.gate, w.provider, w.keyFaults)
    try Self.writeKey(f.keyPath, byte: 9)
    keyFaults.resetCounts()
    #expect(try provider.loadKey().bytes == [UInt8](repeating: 9, count: 32))
    #expect(keyFaults.count(of: .pread) > 0, "read from the file again: \(keyFaults.trace)")
  }
}
