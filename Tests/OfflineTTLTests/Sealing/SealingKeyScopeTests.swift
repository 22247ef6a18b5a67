import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @testable import OfflineTTL

/// One sealing key per operation (outside test 2, F2): a key file removed or replaced during a
/// sealed sign-in or read never splits that operation over two keys. Before, a sign-in whose key
/// file was removed between its staging and its mark reset reported success, created a new key
/// for the mark, and left a store readable with neither key.
@Suite struct SealingKeyScopeTests {
  typealias Fixture = SealedStoreTests.Fixture

  /// An item store that runs `change` once, just before the sign-in's commit point (the mark
  /// reset), after the sealed staging: where the outside tester removed the key file.
  final class ChangeBeforeCommitPoint: ForwardingCacheStore, @unchecked Sendable {
    let base: any CacheItemStore
    let change: Mutex<(@Sendable () -> Void)?>

    init(_ base: DirectoryCacheStore, _ change: @escaping @Sendable () -> Void) {
      self.base = base
      self.change = Mutex(change)
    }

    func commitSignIn(
      preparing prepare: () -> CacheChanges, storedGeneration: () throws(StoreError) -> UInt64?,
      commitPoint: () -> Bool
    ) throws(StoreError) -> Bool {
      try base.commitSignIn(preparing: prepare, storedGeneration: storedGeneration) {
        change.withLock { change in
          defer { change = nil }
          return change
        }?()
        return commitPoint()
      }
    }
  }

  /// A gate whose item and mark stores have providers of their own (as the command line's do),
  /// counting the key file's opens in `plan`; nothing is remembered between loads, so every
  /// load the operation makes opens the file.
  func gate(_ f: Fixture, plan: SyscallFaultPlan, beforeCommitPoint: (@Sendable () -> Void)? = nil)
    throws -> OfflineAccessGate
  {
    func provider() -> FileSealingKeyProvider {
      FileSealingKeyProvider(path: f.keyPath, faults: plan, settle: .seconds(1_000_000))
    }
    let cache = DirectoryCacheStore(atPath: f.store, sealing: provider())
    return OfflineAccessGate(
      cache: beforeCommitPoint.map { ChangeBeforeCommitPoint(cache, $0) } ?? cache,
      marks: FileClockMarkStore(atPath: f.store, sealing: provider()),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
  }

  /// The seam calls of one load of the key for `f`'s store with nothing remembered: the
  /// placement check (it opens the store's directory and the key's, then walks up with
  /// `openat`) and the key file's own open and read. An operation that reads the key once makes
  /// exactly these opens and reads; a second load would add a key-file open and its reads.
  func oneKeyLoad(_ f: Fixture) throws -> (opens: Int, reads: Int) {
    let plan = SyscallFaultPlan()
    _ = try FileSealingKeyProvider(path: f.keyPath, faults: plan, settle: .seconds(1_000_000))
      .loadKey(forStoreAt: f.store)
    return (plan.count(of: .open), plan.count(of: .pread))
  }

  func read(_ f: Fixture, keyPath: String) throws -> String {
    switch try f.gate(keyPath: keyPath).openOffline() {
    case .refused(let decision):
      return "refused: \((decision.markError ?? decision.cacheError).map { "\($0.code)" } ?? "")"
    case .opened(let reader):
      return try reader.item(forKey: "token").map { String(decoding: $0.payload, as: UTF8.self) }
        ?? "nil"
    }
  }

  /// The outside tester's example and its replaced-key twin: the sign-in commits with the key
  /// it staged with (as if the change came right after it), never creates a key mid sign-in,
  /// and the store it leaves reads with that key.
  @Test(arguments: ["removed", "replaced"])
  func aKeyFileChangedBeforeTheCommitPointSealsTheSignInWithOneKey(_ change: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "tok1"])
    let original = f.root.path + "/original.key"
    try FileManager.default.copyItem(atPath: f.keyPath, toPath: original)
    let keyPath = f.keyPath
    let root = f.root.path
    let once = try oneKeyLoad(f)
    let plan = SyscallFaultPlan()
    let gate = try gate(f, plan: plan) {
      if change == "removed" {
        try? FileManager.default.removeItem(atPath: keyPath)
      } else {
        let other = root + "/other.key"
        #expect(
          FileManager.default.createFile(
            atPath: other, contents: Data(repeating: 7, count: 32),
            attributes: [.posixPermissions: 0o600]))
        _ = rename(other, keyPath)
      }
    }
    _ = try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("vA".utf8))])
    #expect(
      FileManager.default.fileExists(atPath: keyPath) == (change == "replaced"),
      "no key is created mid sign-in")
    #expect(
      plan.count(of: .open) == once.opens && plan.count(of: .pread) == once.reads,
      "the sign-in read the key once (\(once)): \(plan.trace)")
    #expect(try read(f, keyPath: original) == "vA", "the whole store reads with the staged key")
    if change == "replaced" {
      #expect(try read(f, keyPath: keyPath) == "refused: \(StoreError.Code.sealMismatch)")
    }
  }

  /// A check and a read each read the key once, however many files they verify with it.
  /// Names of one provider description and directory are one name (their token is shared, so
  /// a check compares them by reference); others differ, and a name outlives nothing it was
  /// made with.
  @Test func namesOfOneTextAreEqualAndOthersAreNot() throws {
    let provider = FileSealingKeyProvider(path: "/nonexistent/key")
    let a = SealingKeyScope.Name(provider, directory: "/a")
    #expect(
      a == SealingKeyScope.Name(FileSealingKeyProvider(path: "/nonexistent/key"), directory: "/a"))
    #expect(a.token === SealingKeyScope.Name(provider, directory: "/a").token)
    #expect(a != SealingKeyScope.Name(provider, directory: "/b"))
    #expect(a != SealingKeyScope.Name(FileSealingKeyProvider(path: "/other/key"), directory: "/a"))
    // Many short-lived names (swept from the table) leave the live one intact.
    for index in 0..<1_000 { _ = SealingKeyScope.Name(provider, directory: "/many/\(index)") }
    #expect(a == SealingKeyScope.Name(provider, directory: "/a"))
    #expect(a.token === SealingKeyScope.Name(provider, directory: "/a").token)
    // The sweeps kept the table near the names alive (other tests' stores hold a few).
    #expect(SealingKeyScope.Token.tableCount < 500)
    #expect(a.text.hasSuffix("\u{0}/a"))
  }

  @Test func aCheckAndAReadEachReadTheKeyOnce() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "tok1"])
    let once = try oneKeyLoad(f)
    let plan = SyscallFaultPlan()
    let gate = try gate(f, plan: plan)
    #expect(gate.checkEligibility().isFresh)
    #expect(plan.count(of: .open) == once.opens, "\(once): \(plan.trace)")
    #expect(plan.count(of: .pread) == once.reads, "\(once): \(plan.trace)")
    guard case .opened(let reader) = gate.openOffline() else {
      throw SignInGenerationTests.Failure("not fresh")
    }
    plan.resetCounts()
    #expect(try reader.item(forKey: "token")?.payload == Data("tok1".utf8))
    #expect(plan.count(of: .open) == once.opens, "\(once): \(plan.trace)")
    #expect(plan.count(of: .pread) == once.reads, "\(once): \(plan.trace)")
  }

  /// A key replaced in the middle of a check (after the index, before the mark) does not split
  /// it: the check is judged with the key it began with.
  @Test func aKeyReplacedDuringACheckDoesNotSplitIt() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "tok1"])
    let keyPath = f.keyPath
    let other = f.root.path + "/other.key"
    let hook = DirectoryCacheStore.SealedReadHook([
      .afterDeferredIndex: {
        #expect(
          FileManager.default.createFile(
            atPath: other, contents: Data(repeating: 9, count: 32),
            attributes: [.posixPermissions: 0o600]))
        _ = rename(other, keyPath)
      }
    ])
    let gate = try gate(f, plan: SyscallFaultPlan())
    let decision = DirectoryCacheStore.$sealedReadHook.withValue(hook) { gate.checkEligibility() }
    #expect(hook.pending.isEmpty)
    #expect(decision.isFresh, "\(decision.reasons) \(decision.markError.map { "\($0)" } ?? "")")
    // The next operation reads the new key and refuses the store sealed with the old one.
    #expect(gate.checkEligibility().markError?.code == .sealMismatch)
  }
}
