import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The subkeys a sealed store value keeps from its key file's memory (`ResolvedSealKeys`): reused
/// only while they are what the provider's own load would return, and dropped by every change
/// that load would see (another key, a rewrite, `chmod`, removal, the provider's memory moving
/// on), whether the store value is used from one thread or many.
@Suite struct ResolvedSealKeysTests {
  typealias Fixture = SealedStoreTests.Fixture

  static let watchAvailable = StoreChangeWatchTests.watchAvailable

  /// A provider that remembers its key at once and watches its path, and an item store and a
  /// mark store over `f`'s store sealed by it.
  struct Stores {
    let provider: FileSealingKeyProvider
    let keyFaults: SyscallFaultPlan
    let cache: DirectoryCacheStore
    let marks: FileClockMarkStore
  }

  func stores(_ f: Fixture) -> Stores {
    let keyFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let provider = FileSealingKeyProvider(path: f.keyPath, faults: keyFaults, settle: .zero)
    return Stores(
      provider: provider, keyFaults: keyFaults,
      cache: DirectoryCacheStore(
        atPath: f.store, faults: SyscallFaultPlan(allowsChangeWatch: true), sealing: provider),
      marks: FileClockMarkStore(
        atPath: f.store, faults: SyscallFaultPlan(allowsChangeWatch: true), sealing: provider))
  }

  /// The store's subkeys resolved outside any scope (as a store call outside a check does).
  func keys(_ s: Stores) throws -> SealKeys {
    try s.cache.sealKeys(creating: false)
  }

  static func writeKey(_ path: String, byte: UInt8) throws {
    let other = path + ".new"
    #expect(
      FileManager.default.createFile(
        atPath: other, contents: Data(repeating: byte, count: 32),
        attributes: [.posixPermissions: 0o600]))
    #expect(rename(other, path) == 0)
  }

  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func unchangedKeyFileIsResolvedOnceAndReusedWithoutReadingIt() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let s = stores(f)
    let first = try keys(s)
    #expect(s.cache.resolvedSealKeys?.current != nil, "kept after the first resolution")
    s.keyFaults.resetCounts()
    for _ in 0..<3 {
      let again = try keys(s)
      #expect(again === first, "the very subkeys, not derived again")
    }
    // Outside a check the watch polls for itself; nothing is opened or read.
    #expect(s.keyFaults.count(of: .poll) == 3, "\(s.keyFaults.trace)")
    #expect(s.keyFaults.count(of: .open) == 0 && s.keyFaults.count(of: .pread) == 0)
  }

  /// Each change the provider's load would see, and what the next resolution must give: the
  /// new key's subkeys, or the provider's refusal.
  typealias Change = (name: String, expected: String, change: @Sendable (Fixture) throws -> Void)

  static let changes: [Change] =
    [
      ("another key renamed over it", "new key", { f in try writeKey(f.keyPath, byte: 7) }),
      (
        "rewritten in place", "new key",
        { f in
          let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: f.keyPath))
          try handle.write(contentsOf: Data(repeating: 7, count: 32))
          try handle.close()
        }
      ),
      (
        "made readable by others", "\(SealingKeyError.Code.insecureMode)",
        { f in #expect(chmod(f.keyPath, 0o644) == 0) }
      ),
      (
        "removed", "\(SealingKeyError.Code.missing)",
        { f in try FileManager.default.removeItem(atPath: f.keyPath) }
      ),
    ]

  @Test(
    .enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"),
    arguments: changes.indices)
  func aChangedKeyFileDropsTheResolvedKeys(_ index: Int) throws {
    let change = Self.changes[index]
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let s = stores(f)
    let before = try keys(s)
    _ = try s.marks.sealKeys(creating: false)
    try change.change(f)
    for store in ["item store", "mark store"] {
      let outcome: String
      do {
        let now = try store == "item store" ? keys(s) : s.marks.sealKeys(creating: false)!
        #expect(now !== before, "\(change.name), \(store): not the kept subkeys")
        let fresh = SealKeys(try SealingKey(bytes: [UInt8](repeating: 7, count: 32)))
        outcome = now.check == fresh.check ? "new key" : "another key"
      } catch {
        // A key the provider refuses: `key_unavailable`, its message led by the key's code.
        let message = (error as? StoreError)?.message ?? "\(error)"
        outcome = message.components(separatedBy: " ").first ?? message
      }
      #expect(outcome == change.expected, "\(change.name), \(store)")
    }
  }

  /// The provider's memory moving on (a key forgotten, or remembered again from another read)
  /// drops what a store value resolved from it, even while its watch reports nothing: the next
  /// resolution asks the provider.
  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func theMemoryMovingOnDropsTheResolvedKeys() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let s = stores(f)
    let first = try keys(s)
    let memory = try #require(s.cache.resolvedSealKeys?.memory)
    let key = try s.provider.loadKey()
    let status = try #require(memory.entry.withLock { $0?.status })
    memory.remember(
      key: key, status: status, user: geteuid(), watch: nil, placedOutside: nil, remember: false)
    #expect(s.cache.resolvedSealKeys?.current == nil, "the generation moved")
    s.keyFaults.resetCounts()
    let again = try keys(s)
    #expect(again.check == first.check, "the same key, read again")
    #expect(s.keyFaults.count(of: .pread) > 0, "asked the file: \(s.keyFaults.trace)")
  }

  final class Counts: Sendable {
    let replaced = Atomic<Bool>(false)
    let staleAfterReplacement = Atomic<Int>(0)
  }

  /// One gate used from eight threads while the key file is replaced: no check ever serves
  /// the store with a key the file no longer holds once the replacement is done, and every
  /// check after it (on any thread) refuses the store (sealed with the old key).
  @Test(.enabled(if: watchAvailable, "needs inotify (Linux) and a local file system"))
  func aStoreValueSharedByThreadsSeesAKeyReplacedMeanwhile() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let s = stores(f)
    let gate = OfflineAccessGate(
      cache: s.cache, marks: s.marks,
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
    #expect(gate.checkEligibility().isFresh)
    #expect(gate.checkEligibility().isFresh)
    let counts = Counts()
    let threads = 8
    let group = DispatchGroup()
    for _ in 0..<threads {
      group.enter()
      Thread.detachNewThread {
        defer { group.leave() }
        for _ in 0..<150 {
          let wasReplaced = counts.replaced.load(ordering: .acquiring)
          let decision = gate.checkEligibility()
          if wasReplaced && decision.isFresh {
            counts.staleAfterReplacement.add(1, ordering: .relaxed)
          }
        }
      }
    }
    Thread.sleep(forTimeInterval: 0.05)
    try Self.writeKey(f.keyPath, byte: 7)
    counts.replaced.store(true, ordering: .releasing)
    #expect(group.wait(timeout: .now() + 120) == .success, "the threads finished in time")
    #expect(
      counts.staleAfterReplacement.load(ordering: .relaxed) == 0, "no check served the old key")
    let after = (0..<threads).map { _ in gate.checkEligibility() }
    #expect(after.allSatisfy { !$0.isFresh }, "refused after the replacement")
    #expect(after.allSatisfy { $0.cacheError?.code == .sealMismatch || $0.markError != nil })
  }
}
