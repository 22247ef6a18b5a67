import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// A first sealed sign-in that stopped before its commit point (the first clock-mark record)
/// left a lock, perhaps a staging and `pending`, perhaps a key file: nothing was committed, so a
/// check says `unavailable` (nothing cached, no reason; no mark error but `absent`), not `expired`; and a
/// key creation that stopped midway leaves nothing the next online load does not remove.
@Suite struct InterruptedFirstSignInTests {
  typealias Fixture = SealedStoreTests.Fixture

  /// Stages a first sign-in whose commit point fails (as if killed there), then removes what a
  /// kill earlier would not have written yet.
  func interruptedFirstSignIn(
    _ f: Fixture, removingPending: Bool, removingStaging: Bool, removingKey: Bool
  ) throws {
    let cache = DirectoryCacheStore(
      atPath: f.store, sealing: FileSealingKeyProvider(path: f.keyPath))
    var changes = CacheChanges()
    changes.write(try CacheItemKey("token"), Data("value".utf8), writtenAt: f.clock.now())
    #expect(
      try cache.commitSignIn(changes, storedGeneration: { nil }, commitPoint: { false }) == false)
    let files = FileManager.default
    #expect(files.fileExists(atPath: f.store + "/cache/next-1"))
    #expect(!files.fileExists(atPath: f.store + "/" + FileClockMarkStore.recordFileName))
    if removingPending { try files.removeItem(atPath: f.store + "/cache/pending") }
    if removingStaging { try files.removeItem(atPath: f.store + "/cache/next-1") }
    if removingKey { try files.removeItem(atPath: f.keyPath) }
  }

  @Test(arguments: [
    (false, false, false), (true, false, false), (true, true, false), (false, false, true),
    (true, true, true), (true, false, true),
  ])
  func aFirstSignInStoppedBeforeItsCommitPointIsNoCache(
    _ removing: (pending: Bool, staging: Bool, key: Bool)
  ) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try interruptedFirstSignIn(
      f, removingPending: removing.pending, removingStaging: removing.staging,
      removingKey: removing.key)
    for gate in [try f.gate(), try f.gate()] {
      let decision = gate.checkEligibility()
      #expect(decision.status == .unavailable, "\(removing): \(decision)")
      #expect(decision.reasons.isEmpty, "\(removing)")
      // No mark: `absent` when the check looked for one (a sign-in's `pending` sends it to the
      // mark first), none when the items alone said nothing is cached.
      #expect(decision.markError.map { $0.code == .absent } ?? true, "\(removing)")
      #expect(decision.cacheError == nil, "\(removing): \(String(describing: decision.cacheError))")
      guard case .refused(let refusal) = gate.openOffline() else {
        Issue.record("opened a store that holds nothing")
        continue
      }
      #expect(refusal.status == .unavailable)
    }
    // The next sign-in commits, and its items read.
    try f.signIn(["token": "new"])
    #expect(try f.gate().checkEligibility().isFresh)
  }

  /// A committed store is still refused when its mark record is gone: nothing of the above
  /// makes a store that holds items read as empty.
  @Test func aCommittedStoreWithoutItsMarkIsStillRefused() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    try FileManager.default.removeItem(atPath: f.store + "/" + FileClockMarkStore.recordFileName)
    let decision = try f.gate().checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.markMissing))
  }

  /// What a key creation killed midway leaves beside the key file (a partly written temporary
  /// file, or a second name of the published key) is removed by the next online load, which
  /// keeps the key; with no key, it creates one and leaves nothing else.
  @Test(arguments: [true, false])
  func leftoversOfAKilledKeyCreationAreRemovedByTheNextOnlineLoad(_ keyExists: Bool) throws {
    let root = try TemporaryStoreDirectory(prefix: "key-leftovers")
    defer { root.remove() }
    let path = root.path + "/store.key"
    let files = FileManager.default
    if keyExists {
      try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: path))
      try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
      try files.linkItem(atPath: path, toPath: root.path + "/.store.key.new-0123456789abcdef")
    }
    try Data(repeating: 1, count: 5).write(
      to: URL(fileURLWithPath: root.path + "/.store.key.new-fedcba98"))
    try Data("unrelated".utf8).write(to: URL(fileURLWithPath: root.path + "/.other.key.new-1"))
    let key = try FileSealingKeyProvider(path: path).loadOrCreateKey()
    if keyExists { #expect(key.bytes == [UInt8](repeating: 7, count: 32)) }
    #expect(
      try files.contentsOfDirectory(atPath: root.path).sorted() == [
        ".other.key.new-1", "store.key",
      ])
    #expect(try files.attributesOfItem(atPath: path)[.referenceCount] as? Int == 1)
  }

  /// A new key is created without any temporary name where the file system supports unnamed
  /// files (`O_TMPFILE`): a kill at any point leaves no file or the whole key.
  @Test func aNewKeyIsCreatedWithoutATemporaryName() throws {
    let root = try TemporaryStoreDirectory(prefix: "key-unnamed")
    defer { root.remove() }
    let faults = SyscallFaultPlan()
    let provider = FileSealingKeyProvider(path: root.path + "/store.key", faults: faults)
    _ = try provider.loadOrCreateKey()
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["store.key"])
    #if os(Linux)
      #expect(faults.count(of: .unlinkat) == 0, "no temporary name to remove: \(faults.trace)")
    #endif
  }

  /// Where unnamed files are not supported (`O_TMPFILE` fails with `EOPNOTSUPP`), the key is
  /// written under a temporary name and published; the temporary name is gone afterwards.
  @Test func withoutUnnamedFilesTheTemporaryNameIsRemoved() throws {
    let root = try TemporaryStoreDirectory(prefix: "key-named")
    defer { root.remove() }
    let faults = SyscallFaultPlan()
    // The first `openat` is the load's, of the key inside its directory (missing); the second
    // is the unnamed file's.
    faults.fail(.openat, occurrence: 2, with: Errno(rawValue: EOPNOTSUPP))
    let provider = FileSealingKeyProvider(path: root.path + "/store.key", faults: faults)
    let key = try provider.loadOrCreateKey()
    #expect(faults.injected.count == 1, "the unnamed open was tried: \(faults.trace)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["store.key"])
    #expect(try FileSealingKeyProvider(path: root.path + "/store.key").loadKey().bytes == key.bytes)
  }

  /// The temporary name is bounded too: a key file whose own name is as long as a name may be
  /// (255 bytes, here with 2-byte scalars near the cut) is made where unnamed files are not
  /// supported; the temporary name it went through (its name + 22 bytes before) fits, and is
  /// gone afterwards.
  @Test(arguments: [
    String(repeating: "k", count: 255), String(repeating: "k", count: 233),
    String(repeating: "\u{E9}", count: 127),
  ])
  func aKeyWithALongNameIsMadeWithoutUnnamedFiles(_ name: String) throws {
    let root = try TemporaryStoreDirectory(prefix: "key-long-name")
    defer { root.remove() }
    let faults = SyscallFaultPlan()
    faults.fail(.openat, occurrence: 2, with: Errno(rawValue: EOPNOTSUPP))
    let provider = FileSealingKeyProvider(path: root.appending(name), faults: faults)
    #expect(provider.temporaryPrefix.utf8.count + 16 <= 255, "\(provider.temporaryPrefix)")
    let key = try provider.loadOrCreateKey()
    #expect(faults.injected.count == 1, "the unnamed open was tried: \(faults.trace)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == [name])
    #expect(try FileSealingKeyProvider(path: root.appending(name)).loadKey().bytes == key.bytes)
  }
}
