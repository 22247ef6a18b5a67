import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The key file: created only on the online path, every unusable file a typed refusal.
@Suite struct FileSealingKeyProviderTests {
  let directory: String

  init() throws {
    directory = NSTemporaryDirectory() + "offline-ttl-key-" + UUID().uuidString
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
  }

  func write(_ bytes: [UInt8], to name: String = "key", mode: Int = 0o600) throws -> String {
    let path = directory + "/" + name
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    return path
  }

  /// The code `body` fails with; `nil` when it succeeds.
  func code(_ body: () throws -> SealingKey) -> SealingKeyError.Code? {
    do {
      _ = try body()
      return nil
    } catch {
      return (error as? SealingKeyError)?.code ?? .init(.io)
    }
  }

  @Test func aMissingKeyIsRefusedOfflineAndCreatedOnline() throws {
    let provider = FileSealingKeyProvider(path: directory + "/key")
    #expect(code { try provider.loadKey() } == .missing)
    #expect(!FileManager.default.fileExists(atPath: directory + "/key"))
    let created = try provider.loadOrCreateKey()
    let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/key")
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    #expect((attributes[.size] as? Int) == 32)
    #expect(try provider.loadKey().bytes == created.bytes)
    #expect(try provider.loadOrCreateKey().bytes == created.bytes)
    // No temporary file is left behind.
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["key"])
  }

  @Test(arguments: [
    ("k", "", "k"), ("/k", "/", "k"), ("a/k", "a", "k"), ("/a/b/k", "/a/b", "k"),
    ("a/k/", "a/k", ""), ("./k", ".", "k"),
  ])
  func aKeyPathSplitsAtItsLastSlash(_ path: String, _ directory: String, _ name: String) {
    let split = FileSealingKeyProvider.split(path)
    #expect(split.directory == directory && split.name == name, "\(path): \(split)")
  }

  @Test func aValidKeyFileLoadsExactly() throws {
    let bytes = (0..<32).map { UInt8($0 * 3) }
    let provider = FileSealingKeyProvider(path: try write(bytes))
    #expect(try provider.loadKey().bytes == bytes)
  }

  @Test(arguments: [0, 1, 31, 33, 64])
  func aKeyFileOfTheWrongSizeIsRefused(_ size: Int) throws {
    let provider = FileSealingKeyProvider(path: try write([UInt8](repeating: 7, count: size)))
    #expect(code { try provider.loadKey() } == .wrongSize)
    // The online path does not replace it either: a damaged key is the caller's to fix.
    #expect(code { try provider.loadOrCreateKey() } == .wrongSize)
  }

  @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o666, 0o700])
  func aKeyFileOpenToOthersIsRefused(_ mode: Int) throws {
    let provider = FileSealingKeyProvider(
      path: try write([UInt8](repeating: 7, count: 32), mode: mode))
    if mode & 0o077 != 0 {
      #expect(code { try provider.loadKey() } == .insecureMode)
    } else {
      #expect(code { try provider.loadKey() } == nil)
    }
  }

  @Test func aSymbolicLinkIsNeverFollowed() throws {
    let target = try write([UInt8](repeating: 7, count: 32), to: "real")
    try FileManager.default.createSymbolicLink(
      atPath: directory + "/link", withDestinationPath: target)
    let provider = FileSealingKeyProvider(path: directory + "/link")
    #expect(code { try provider.loadKey() } == .symbolicLink)
    #expect(code { try provider.loadOrCreateKey() } == .symbolicLink)
    // A dangling link is not "missing": the online path must not create a key through it.
    try FileManager.default.createSymbolicLink(
      atPath: directory + "/dangling", withDestinationPath: directory + "/nowhere")
    let dangling = FileSealingKeyProvider(path: directory + "/dangling")
    #expect(code { try dangling.loadOrCreateKey() } == .symbolicLink)
    #expect(!FileManager.default.fileExists(atPath: directory + "/nowhere"))
  }

  @Test func aDirectoryOrAFifoIsRefusedWithoutWaiting() throws {
    try FileManager.default.createDirectory(
      atPath: directory + "/dir", withIntermediateDirectories: false)
    #expect(
      code { try FileSealingKeyProvider(path: directory + "/dir").loadKey() } == .notRegularFile)
    // A FIFO with no writer would block a plain open(2) forever.
    #expect(mkfifo(directory + "/fifo", 0o600) == 0)
    neverWaitingOn([directory + "/fifo"], "the key load waited on a FIFO") {
      #expect(
        code { try FileSealingKeyProvider(path: directory + "/fifo").loadKey() } == .notRegularFile)
    }
  }

  @Test func aKeyFileOfAnotherUserIsRefused() throws {
    let path: String
    if geteuid() == 0 {
      path = try write([UInt8](repeating: 7, count: 32))
      #expect(chown(path, 65_534, 65_534) == 0)
    } else {
      // A file root owns, readable by everyone: the owner is checked before mode and size.
      path = "/etc/hostname"
    }
    #expect(code { try FileSealingKeyProvider(path: path).loadKey() } == .wrongOwner)
  }

  @Test func aFailedReadIsTypedWithItsErrno() throws {
    let path = try write([UInt8](repeating: 7, count: 32))
    let faults = SyscallFaultPlan()
    faults.fail(.pread, with: .ioError)
    do {
      _ = try FileSealingKeyProvider(path: path, faults: faults).loadKey()
      Issue.record("read despite the fault")
    } catch {
      #expect(error.code == .io)
      #expect(error.errno == EIO)
    }
  }

  @Test func creatingInAMissingDirectoryFailsTyped() {
    let provider = FileSealingKeyProvider(path: directory + "/no/such/key")
    #expect(code { try provider.loadOrCreateKey() } == .io)
  }

  @Test func aMissingDirectoryIsSaidToBeMissing() {
    let provider = FileSealingKeyProvider(path: directory + "/no/such/key")
    do {
      _ = try provider.loadKey()
      Issue.record("loaded a key from a directory that does not exist")
    } catch {
      #expect(error.code == .missing)
      #expect(
        error.reason.contains("its directory \(directory)/no/such does not exist"), "\(error)")
    }
  }

  @Test func aKeyFileOfZeroBytesIsWeakAndKept() throws {
    let path = try write([UInt8](repeating: 0, count: 32))
    let provider = FileSealingKeyProvider(path: path)
    #expect(code { try provider.loadKey() } == .weak)
    // The online path does not replace it: it is the caller's file.
    #expect(code { try provider.loadOrCreateKey() } == .weak)
    #expect(FileManager.default.contents(atPath: path) == Data(count: 32))
    #expect(SealingKeyError.Code.weak.description == "key_weak")
    // One byte that is not zero is a key (its strength is the maker's business).
    var bytes = [UInt8](repeating: 0, count: 32)
    bytes[31] = 1
    #expect(try FileSealingKeyProvider(path: try write(bytes, to: "one")).loadKey().bytes == bytes)
  }

  @Test func concurrentCreatorsEndWithOneKey() async throws {
    let provider = FileSealingKeyProvider(path: directory + "/key")
    let checks = await withTaskGroup(of: [UInt8]?.self) { group in
      for _ in 0..<8 { group.addTask { try? provider.loadOrCreateKey().bytes } }
      var all: [[UInt8]?] = []
      for await check in group { all.append(check) }
      return all
    }
    #expect(checks.allSatisfy { $0 != nil })
    #expect(Set(checks.compactMap { $0 }).count == 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["key"])
  }

  @Test func aKeyInsideTheStoreItSealsIsRefused() throws {
    let store = directory + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: directory + "/alias", withDestinationPath: store)
    for inside in [store + "/key", store + "/sub/key", directory + "/alias/key"] {
      #expect(throws: SealingKeyError.self) {
        try FileSealingKeyProvider(path: inside).checkKeptOutside(storeDirectory: store)
      }
    }
    #expect(throws: SealingKeyError.self) {
      try FileSealingKeyProvider(path: store + "/key").checkKeptOutside(
        storeDirectory: directory + "/alias")
    }
    for outside in [directory + "/key", directory + "/store-key", directory + "/storekey"] {
      try FileSealingKeyProvider(path: outside).checkKeptOutside(storeDirectory: store)
    }
  }

  /// Nothing is remembered by the check itself: a key that is inside stays refused however often
  /// it is checked, and another pair is still judged on its own.
  @Test func thePlacementCheckRefusesEveryTime() throws {
    let store = directory + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
    let outside = FileSealingKeyProvider(path: directory + "/key")
    for _ in 0..<3 { try outside.checkKeptOutside(storeDirectory: store) }
    let inside = FileSealingKeyProvider(path: store + "/key")
    for _ in 0..<3 {
      #expect(throws: SealingKeyError.self) { try inside.checkKeptOutside(storeDirectory: store) }
    }
    // The same key against a store that contains it, after passing against another store.
    #expect(throws: SealingKeyError.self) {
      try outside.checkKeptOutside(storeDirectory: directory)
    }
  }

  /// A remembered key is served after one `lstat` and no open (an open would fail here), by the
  /// provider and its copies, while the file is unchanged.
  @Test func anUnchangedKeyFileIsServedFromMemory() throws {
    let bytes = (0..<32).map { UInt8($0 + 1) }
    let path = try write(bytes)
    let faults = SyscallFaultPlan()
    let provider = FileSealingKeyProvider(path: path, faults: faults, settle: .zero)
    #expect(try provider.loadKey().bytes == bytes)
    faults.fail(.open, with: .ioError)
    faults.resetCounts()
    let copy = provider
    for _ in 0..<3 { #expect(try copy.loadKey().bytes == bytes) }
    #expect(faults.count(of: .open) == 0)
    #expect(faults.count(of: .fstatat) == 3)
    // With the file just written and the default settle, nothing is remembered: every load opens.
    let fresh = FileSealingKeyProvider(path: path, faults: faults)
    #expect(code { try fresh.loadKey() } == .io)
  }

  /// Every change of the key file is seen at the next load, with the refusal a first load gives:
  /// another file renamed over it, a mode or owner change, a symbolic link, removal.
  @Test func aChangedKeyFileIsReadAgain() throws {
    let first = [UInt8](repeating: 1, count: 32)
    let path = try write(first)
    let provider = FileSealingKeyProvider(path: path, faults: nil, settle: .zero)
    #expect(try provider.loadKey().bytes == first)
    // Another file renamed over the key (a new inode), same size.
    let second = [UInt8](repeating: 2, count: 32)
    let replacement = try write(second, to: "replacement")
    #expect(rename(replacement, path) == 0)
    #expect(try provider.loadKey().bytes == second)
    // chmod: refused at once, and served again once the mode is private.
    #expect(chmod(path, 0o644) == 0)
    #expect(code { try provider.loadKey() } == .insecureMode)
    #expect(chmod(path, 0o600) == 0)
    #expect(try provider.loadKey().bytes == second)
    // A symbolic link in its place.
    let real = try write(second, to: "real")
    #expect(unlink(path) == 0)
    #expect(symlink(real, path) == 0)
    #expect(code { try provider.loadKey() } == .symbolicLink)
    // Removed.
    #expect(unlink(path) == 0)
    #expect(code { try provider.loadKey() } == .missing)
  }

  /// A key rewritten in place right after a load (within the timestamp tick that keeps its times)
  /// is never served stale: a key file younger than the settle interval is not remembered.
  @Test func aKeyRewrittenInPlaceWithinTheSettleIntervalIsReadAgain() throws {
    let path = try write([UInt8](repeating: 1, count: 32))
    let provider = FileSealingKeyProvider(path: path)
    for round in 2..<6 {
      #expect(
        try provider.loadKey(forStoreAt: directory + "/store").bytes.first == UInt8(round - 1))
      let fd = open(path, O_WRONLY)
      #expect(fd >= 0)
      let bytes = [UInt8](repeating: UInt8(round), count: 32)
      #expect(pwrite(fd, bytes, 32, 0) == 32)
      close(fd)
    }
  }

  /// The placement gap: a symbolic link swapped in after a check passed, which makes the key
  /// path reach a key inside the store, is refused at the next load (`key_inside_store`), and
  /// the store's key is never used.
  @Test func aLinkSwappedInAfterAPassedCheckIsCaught() throws {
    let store = directory + "/store"
    let keys = directory + "/keys"
    for path in [store, keys] {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }
    let genuine = [UInt8](repeating: 1, count: 32)
    #expect(
      FileManager.default.createFile(
        atPath: keys + "/key", contents: Data(genuine), attributes: [.posixPermissions: 0o600]))
    let provider = FileSealingKeyProvider(path: keys + "/key", faults: nil, settle: .zero)
    for _ in 0..<2 { #expect(try provider.loadKey(forStoreAt: store).bytes == genuine) }
    // The forger can write the store: a key of theirs there, and the key directory a link to it.
    #expect(
      FileManager.default.createFile(
        atPath: store + "/key", contents: Data([UInt8](repeating: 9, count: 32)),
        attributes: [.posixPermissions: 0o600]))
    try FileManager.default.moveItem(atPath: keys, toPath: directory + "/keys-moved")
    try FileManager.default.createSymbolicLink(atPath: keys, withDestinationPath: store)
    for _ in 0..<2 {
      #expect(code { try provider.loadKey(forStoreAt: store) } == .insideStore)
    }
  }

  /// A sign-in refused for its key makes nothing of the store: no store directory, `cache/`,
  /// lock or clock mark is left behind (the key is loaded, or made, before the store is
  /// touched). Kinds: a key inside the new store, under a missing directory, a key that is a
  /// symbolic link, a key of the wrong size.
  @Test(arguments: ["inside", "missing-directory", "link", "short"])
  func aSignInRefusedForItsKeyMakesNoStore(_ kind: String) throws {
    let store = directory + "/store"
    let keyPath: String
    switch kind {
    case "inside":
      keyPath = store + "/key"
    case "missing-directory":
      keyPath = directory + "/absent/key"
    case "link":
      keyPath = directory + "/key-link"
      try FileManager.default.createSymbolicLink(
        atPath: keyPath, withDestinationPath: try write([UInt8](repeating: 1, count: 32)))
    default:
      keyPath = try write([UInt8](repeating: 1, count: 7))
    }
    let provider = FileSealingKeyProvider(path: keyPath)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store, sealing: provider),
      marks: FileClockMarkStore(atPath: store, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false))
    var refusal: (any Error)?
    do {
      _ = try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("t".utf8))])
    } catch {
      refusal = error
    }
    let text = refusal.map { String(describing: $0) } ?? "signed in"
    #expect(refusal != nil, "\(kind)")
    if kind == "inside" { #expect(text.contains("key_inside_store"), "\(text)") }
    #expect(!FileManager.default.fileExists(atPath: store), "\(kind): \(text)")
  }

  /// A store's key is checked for placement against each store it is loaded for, remembered
  /// or not.
  @Test func aRememberedKeyIsStillCheckedAgainstAnotherStore() throws {
    let store = directory + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
    let provider = FileSealingKeyProvider(
      path: try write([UInt8](repeating: 1, count: 32)), faults: nil, settle: .zero)
    _ = try provider.loadKey(forStoreAt: store)
    _ = try provider.loadKey(forStoreAt: store)
    #expect(code { try provider.loadKey(forStoreAt: directory) } == .insideStore)
    #expect(code { try provider.loadKey(forStoreAt: directory) } == .insideStore)
    #expect(try provider.loadKey(forStoreAt: store).bytes.first == 1)
  }
}
