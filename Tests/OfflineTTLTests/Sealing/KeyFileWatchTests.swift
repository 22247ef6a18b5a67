import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// A remembered key file is watched (inotify: the file and every directory above it, and the
/// mount table) instead of `lstat`ed at every load. Every change between two loads that the
/// `lstat` saw is still seen at the next load, with the refusal or the new key a first load
/// gives; an unchanged file is served after one `poll` and no other call on its path.
@Suite struct KeyFileWatchTests {
  /// A key directory of its own (two levels below the temporary directory, so renaming the
  /// key's directory is a case), and a provider whose loads are counted.
  struct Fixture {
    let root: TemporaryStoreDirectory
    let directory: String
    let path: String
    let faults = SyscallFaultPlan(allowsChangeWatch: true)
    let provider: FileSealingKeyProvider

    init() throws {
      root = try TemporaryStoreDirectory(prefix: "key-watch")
      directory = root.path + "/keys"
      path = directory + "/store.key"
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
      try Self.write(path, byte: 1)
      provider = FileSealingKeyProvider(path: path, faults: faults, settle: .zero)
    }

    static func write(_ path: String, byte: UInt8, mode: Int = 0o600) throws {
      let url = URL(fileURLWithPath: path)
      try Data(repeating: byte, count: 32).write(to: url)
      try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// The first byte of the loaded key, or the refusal's code.
    func load() -> String {
      do {
        return "key \(try provider.loadKey().bytes[0])"
      } catch {
        return "\(error.code)"
      }
    }
  }

  static let watchAvailable = StoreChangeWatchTests.watchAvailable

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"
    ))
  func anUnchangedKeyFileIsServedAfterOnePollAndNothingElse() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    #expect(f.load() == "key 1")
    for _ in 0..<3 {
      f.faults.resetCounts()
      #expect(f.load() == "key 1")
      #expect(f.faults.count(of: .poll) == 1, "\(f.faults.trace)")
      #expect(f.faults.count(of: .fstatat) == 0, "no lstat of the key path: \(f.faults.trace)")
      #expect(f.faults.count(of: .open) == 0 && f.faults.count(of: .pread) == 0)
    }
  }

  /// Each change, made between two loads, and what the next load must give.
  static let changes:
    [(name: String, expected: String, change: @Sendable (Fixture) throws -> Void)] = [
      ("replaced in place", "key 2", { f in try Fixture.write(f.path, byte: 2) }),
      (
        "another file renamed over it", "key 3",
        { f in
          try Fixture.write(f.directory + "/new", byte: 3)
          _ = rename(f.directory + "/new", f.path)
        }
      ),
      ("removed", "key_missing", { f in try FileManager.default.removeItem(atPath: f.path) }),
      (
        "chmod 0644", "key_insecure_mode",
        { f in
          try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: f.path)
        }
      ),
      (
        "renamed away", "key_missing",
        { f in try FileManager.default.moveItem(atPath: f.path, toPath: f.directory + "/old") }
      ),
      (
        "replaced by a symbolic link", "key_symbolic_link",
        { f in
          try Fixture.write(f.directory + "/target", byte: 4)
          try FileManager.default.removeItem(atPath: f.path)
          try FileManager.default.createSymbolicLink(
            atPath: f.path, withDestinationPath: f.directory + "/target")
        }
      ),
      (
        "its directory renamed and another put in its place", "key 5",
        { f in
          try FileManager.default.moveItem(atPath: f.directory, toPath: f.root.path + "/old-keys")
          try FileManager.default.createDirectory(
            atPath: f.directory, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
          try Fixture.write(f.path, byte: 5)
        }
      ),
      (
        "its directory's parent renamed and another put in its place", "key 6",
        { f in
          let parent = f.root.path
          let moved = parent + "-moved"
          try FileManager.default.moveItem(atPath: parent, toPath: moved)
          try FileManager.default.createDirectory(
            atPath: f.directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
          try Fixture.write(f.path, byte: 6)
          // Put the original back under another name inside the new root, for the cleanup.
          try FileManager.default.moveItem(atPath: moved, toPath: parent + "/moved")
        }
      ),
      (
        // A key with a second name is refused (a copy of the key goes wherever it goes).
        "a second link added", "key_hard_linked",
        { f in try FileManager.default.linkItem(atPath: f.path, toPath: f.directory + "/link") }
      ),
    ]

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"
    ),
    arguments: changes.indices)
  func aChangeBetweenTwoLoadsIsSeenAtTheNextLoad(_ index: Int) throws {
    let (name, expected, change) = Self.changes[index]
    let f = try Fixture()
    defer { f.root.remove() }
    #expect(f.load() == "key 1")
    #expect(f.load() == "key 1")
    try change(f)
    f.faults.resetCounts()
    #expect(f.load() == expected, "\(name)")
    #expect(f.faults.count(of: .open) >= 1, "\(name): the file was read again")
    // And the load after that is judged the same way again (the new file is watched anew).
    #expect(f.load() == expected, "\(name), twice")
  }

  /// Attribute changes of other entries of a directory on the path (a busy `/tmp` or home
  /// directory: every `chmod` or `touch` there is reported to a watch of the directory) do not
  /// send the next load to the file: the path does not depend on them.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func changesToOtherEntriesAboveTheKeyKeepItRemembered() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let sibling = f.directory + "/sibling"
    let uncle = f.root.path + "/uncle"
    for path in [sibling, uncle] { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
    #expect(f.load() == "key 1")
    for path in [sibling, uncle] {
      try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
    }
    f.faults.resetCounts()
    #expect(f.load() == "key 1")
    #expect(f.faults.count(of: .open) == 0, "read again: \(f.faults.trace)")
  }

  /// A key that was never remembered (the default settle, a file just written) keeps its
  /// `lstat`-free path out of it: every load reads the file, and no watch is set up.
  @Test func aKeyThatIsNotRememberedIsReadAtEveryLoad() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let faults = SyscallFaultPlan(allowsChangeWatch: true)
    let provider = FileSealingKeyProvider(path: f.path, faults: faults)
    for _ in 0..<2 {
      faults.resetCounts()
      #expect(try provider.loadKey().bytes[0] == 1)
      #expect(faults.count(of: .open) == 1 && faults.count(of: .inotify) == 0)
    }
  }

  /// A directory above the key whose file system the watch cannot learn (its `fstatfs` fails:
  /// it could be btrfs, where a subvolume deleted above the key reports nothing) is not
  /// watched: every load keeps the `lstat`, and a key replaced between two loads is read anew.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"
    ))
  func aDirectoryOfAnUnknownFileSystemKeepsTheLstat() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    // The key file's own `fstatfs` (its change watch) succeeds; the root directory's fails.
    let faults = SyscallFaultPlan(
      [.init(kind: .fstatfs, occurrence: 2, errno: Errno(rawValue: EIO))],
      allowsChangeWatch: true)
    let provider = FileSealingKeyProvider(path: f.path, faults: faults, settle: .zero)
    #expect(try provider.loadKey().bytes[0] == 1)
    #expect(faults.count(of: .fstatfs) == 2, "the root directory was asked: \(faults.trace)")
    for _ in 0..<3 {
      faults.resetCounts()
      #expect(try provider.loadKey().bytes[0] == 1)
      #expect(faults.count(of: .fstatat) == 1, "one lstat per load: \(faults.trace)")
      #expect(faults.count(of: .poll) == 0, "no watch: \(faults.trace)")
    }
    try Fixture.write(f.path, byte: 2)
    #expect(try provider.loadKey().bytes[0] == 2)
  }

  /// The file-system type decides: on btrfs (where a subvolume deleted above the key reports
  /// nothing) and on NFS every load keeps the `lstat` of the key path; on ext4 one `poll`
  /// replaces it. The plan reports the type in place of the real one.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"
    ),
    arguments: [(Int64(0x9123_683E), false), (Int64(0x6969), false), (Int64(0xEF53), true)])
  func theFileSystemTypeDecidesWhetherTheKeyPathIsWatched(_ type: Int64, _ watched: Bool)
    throws
  {
    let f = try Fixture()
    defer { f.root.remove() }
    let faults = SyscallFaultPlan(allowsChangeWatch: true)
    faults.reportedFileSystemType = type
    let provider = FileSealingKeyProvider(path: f.path, faults: faults, settle: .zero)
    #expect(try provider.loadKey().bytes[0] == 1)
    for _ in 0..<3 {
      faults.resetCounts()
      #expect(try provider.loadKey().bytes[0] == 1)
      #expect(faults.count(of: .fstatat) == (watched ? 0 : 1), "\(type): \(faults.trace)")
      #expect(faults.count(of: .poll) == (watched ? 1 : 0), "\(type): \(faults.trace)")
    }
  }

  /// A relative key path keeps the `lstat` per load (the working directory can change).
  @Test func aRelativeKeyPathIsNotWatched() throws {
    let faults = SyscallFaultPlan(allowsChangeWatch: true)
    let status = FileStatus(
      kind: .regular, permissions: 0o600, size: 32, ownerID: 0, device: 1, inode: 1)
    #expect(
      KeyFileWatch.watch(
        Syscalls(faults: faults), key: FileDescriptor(rawValue: 0), path: "keys/store.key",
        status: status) == nil)
    #expect(
      KeyFileWatch.watch(
        Syscalls(faults: faults), key: FileDescriptor(rawValue: 0), path: "/a/../store.key",
        status: status) == nil)
    #expect(faults.count(of: .inotify) == 0)
  }

  /// A gate over a sealed store: a key file replaced between two repeated checks is refused at
  /// the next check (`seal_mismatch`), exactly as with the `lstat` per check.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"
    ))
  func aRepeatedSealedCheckSeesAKeyReplacedByAnotherProcess() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let store = f.root.path + "/store"
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store, sealing: f.provider),
      marks: FileClockMarkStore(atPath: store, sealing: f.provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false))
    _ = try gate.beginOnlineSession(writing: [(try CacheItemKey("token"), Data("v".utf8))])
    for _ in 0..<3 { #expect(gate.checkEligibility().isFresh) }
    try Fixture.write(f.directory + "/new", byte: 9)
    _ = rename(f.directory + "/new", f.path)
    let decision = gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.cacheError?.code == .sealMismatch, "\(decision)")
  }
}
