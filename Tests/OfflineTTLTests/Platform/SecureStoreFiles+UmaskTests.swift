import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The library's directories are 0700 and its files 0600 whatever the caller's umask (the
/// library never sets it; an adopter's process may run under any), and an online sign-in gives
/// the owner's bits back to a directory of this user that a umask left at 0000 or 0500, while
/// the offline path changes no mode. Each operation runs on a thread with a umask of its own
/// (``ThreadUmask``), so tests running beside it keep theirs. These run as the test's user
/// (root in the container: a 0000 directory opens anyway); `LibraryUmaskEndToEndTests` runs the
/// same operations as another user in a child process.
@Suite struct SecureStoreFilesUmaskTests {
  /// 777 removes every bit; 277 and 222 leave files 0400 and directories 0500; 377 leaves
  /// 0400 and 0400; 477 leaves directories 0300 (no read: cannot be opened by their owner);
  /// 022 and 000 are the usual ones.
  static let masks: [UInt32] = [0o777, 0o277, 0o222, 0o377, 0o477, 0o022, 0o000]

  /// The mode bits (`st_mode & 07777`) and type of `path`, never following a link.
  static func entry(_ path: String) -> (permissions: UInt32, isDirectory: Bool, isFile: Bool)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    let type = UInt32(info.st_mode) & UInt32(S_IFMT)
    return (UInt32(info.st_mode) & 0o7777, type == UInt32(S_IFDIR), type == UInt32(S_IFREG))
  }

  /// Every path under `root` (itself included) whose mode is not 0700 for a directory or 0600
  /// for a regular file, or that is neither, with its mode.
  static func wrongModes(under root: String) throws -> [String] {
    var wrong: [String] = []
    for path in [""] + (try FileManager.default.subpathsOfDirectory(atPath: root)) {
      let full = path.isEmpty ? root : root + "/" + path
      guard let entry = entry(full) else {
        wrong.append("\(path): cannot lstat")
        continue
      }
      let expected: UInt32? = entry.isDirectory ? 0o700 : entry.isFile ? 0o600 : nil
      if entry.permissions != expected {
        wrong.append("\(path.isEmpty ? "." : path): 0\(String(entry.permissions, radix: 8))")
      }
    }
    return wrong
  }

  struct Fixture: Sendable {
    let root: TemporaryStoreDirectory
    let sealed: Bool
    var store: String { root.appending("store") }
    var keyPath: String { root.appending("key") }

    init(sealed: Bool) throws {
      root = try TemporaryStoreDirectory(prefix: "umask-library")
      self.sealed = sealed
    }

    var provider: (any SealingKeyProvider)? {
      sealed ? FileSealingKeyProvider(path: keyPath) : nil
    }

    func gate() throws -> OfflineAccessGate {
      OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: store, sealing: provider),
        marks: FileClockMarkStore(atPath: store, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false))
    }

    func signIn(_ text: String) throws {
      _ = try gate().beginOnlineSession(writing: [(CacheItemKey("token"), Data(text.utf8))])
    }

    /// The offline check's status, and the item read through an opened reader (or `nil`).
    func checkAndRead() throws -> (status: EligibilityStatus, payload: String?) {
      let status = try gate().checkEligibility().status
      guard case .opened(let reader) = try gate().openOffline() else { return (status, nil) }
      let item = try reader.item(forKey: CacheItemKey("token"))
      return (status, item.map { String(decoding: $0.payload, as: UTF8.self) })
    }
  }

  /// Under each umask, sign-in, check, read, `mark reset` and a second sign-in (sealed with a key
  /// file the library creates, or not) leave every directory at 0700 and every file at 0600; a
  /// later check and read under the usual umask work. A control file created the plain way on
  /// the same thread shows that the umask was in force there, and the process's own umask is
  /// unchanged meanwhile.
  @Test(
    .enabled(if: ThreadUmask.isSupported, "a umask of one thread needs Linux unshare(CLONE_FS)"),
    arguments: masks, [false, true])
  func everyDirectoryAndFileTheLibraryCreatesHasItsModeWhateverTheUmask(
    mask: UInt32, sealed: Bool
  ) throws {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.root.remove() }
    let processUmask = ThreadUmask.processUmask()
    let seen = try ThreadUmask.run(umask: mask) {
      () throws -> [String] in
      var seen: [String] = []
      seen.append("thread umask 0\(String(ThreadUmask.threadUmask() ?? 0xFFFF, radix: 8))")
      let control = open(fixture.root.appending("control"), O_CREAT | O_EXCL | O_WRONLY, 0o600)
      if control >= 0 { close(control) }
      try fixture.signIn("first")
      let first = try fixture.checkAndRead()
      seen.append("\(first.status) \(first.payload ?? "-")")
      _ = try FileClockMarkStore(atPath: fixture.store, sealing: fixture.provider)
        .resetAfterOnlineSignIn(now: SystemWallClock().now())
      try fixture.signIn("second")
      let second = try fixture.checkAndRead()
      seen.append("\(second.status) \(second.payload ?? "-")")
      seen.append("process umask 0\(String(ThreadUmask.processUmask() ?? 0xFFFF, radix: 8))")
      return seen
    }
    #expect(
      seen == [
        "thread umask 0\(String(mask, radix: 8))", "fresh first", "fresh second",
        "process umask 0\(String(processUmask ?? 0xFFFF, radix: 8))",
      ])
    #expect(
      Self.entry(fixture.root.appending("control"))?.permissions == 0o600 & ~mask,
      "the umask was in force on the thread")
    #expect(try Self.wrongModes(under: fixture.store) == [], "umask 0\(String(mask, radix: 8))")
    if sealed {
      #expect(Self.entry(fixture.keyPath)?.permissions == 0o600, "the key file")
    }
    let later = try fixture.checkAndRead()
    #expect(later.status == .fresh && later.payload == "second")
  }

  /// A directory of the store that a umask left without the owner's bits (0000, or 0500 which
  /// cannot be written): the offline check and read change no mode, and the next sign-in gives
  /// the owner's bits back (0700) and reads fresh. Here the test's user may be root, which opens
  /// a 0000 directory anyway; the refusal a user other than root gets from the offline check is
  /// in `LibraryUmaskEndToEndTests`.
  @Test(
    arguments: ["", "cache", "cache/items", "cache/tmp"],
    [UInt32(0o000), 0o500, 0o100, 0o300, 0o600])
  func aSignInGivesTheOwnerBitsBackAndAnOfflineCheckChangesNoMode(
    directory: String, mode: UInt32
  ) throws {
    let fixture = try Fixture(sealed: false)
    defer { fixture.root.remove() }
    try fixture.signIn("first")
    let path = directory.isEmpty ? fixture.store : fixture.store + "/" + directory
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    #expect(chmod(path, mode_t(mode)) == 0)
    _ = try? fixture.checkAndRead()
    #expect(Self.entry(path)?.permissions == mode, "the offline path changed no mode")
    try fixture.signIn("second")
    #expect(Self.entry(path)?.permissions == 0o700)
    #expect(try Self.wrongModes(under: fixture.store) == [])
    let later = try fixture.checkAndRead()
    #expect(later.status == .fresh && later.payload == "second")
  }

  /// What the sign-in does not repair: a directory of the store that another user owns (even at
  /// 0000), or that group or others may write, is still `insecure_store`, and its mode and owner
  /// stay as they were.
  @Test(arguments: ["", "cache", "cache/items"], ["other owner 0000", "ours 0020", "ours 0702"])
  func aSignInStillRefusesADirectoryItCannotTrust(directory: String, kind: String) throws {
    let fixture = try Fixture(sealed: false)
    defer { fixture.root.remove() }
    try fixture.signIn("first")
    let path = directory.isEmpty ? fixture.store : fixture.store + "/" + directory
    let otherOwner = kind.hasPrefix("other")
    if otherOwner {
      guard geteuid() == 0 else { return }  // only root can give a directory away
      #expect(chown(path, 65_534, 65_534) == 0)
    }
    let mode: UInt32 = otherOwner ? 0o000 : kind.hasSuffix("0020") ? 0o020 : 0o702
    #expect(chmod(path, mode_t(mode)) == 0)
    do {
      try fixture.signIn("second")
      Issue.record("signed in over \(path) (\(kind))")
    } catch {
      #expect((error as? OnlineSessionError)?.storeError?.code == .insecureStore, "\(error)")
    }
    var info = stat()
    #expect(lstat(path, &info) == 0)
    #expect(UInt32(info.st_mode) & 0o7777 == mode)
    #expect(info.st_uid == (otherOwner ? 65_534 : geteuid()))
  }

  /// The secure open's own members: a directory it creates is 0700 and a file it creates (open
  /// or create, exclusive create, temporary file) is 0600 under umask 0777; a lock file of this
  /// user at mode 0000 is given its owner's bits back, or replaced, by the online open only.
  @Test(.enabled(if: ThreadUmask.isSupported, "a umask of one thread needs Linux"))
  func theSecureOpenSetsExactModesUnderUmask777() throws {
    let root = try TemporaryStoreDirectory(prefix: "umask-secure-open")
    defer { root.remove() }
    let path = root.appending("store")
    try ThreadUmask.run(umask: 0o777) {
      let secure = SecureStoreFiles()
      let store = try secure.openDirectory(atPath: path, creating: true)
      defer { secure.close(store) }
      let inner = try secure.openDirectory("inner", in: store, creating: true)
      secure.close(inner)
      let opened = try secure.openFile("lock", in: store, [.readWrite, .create])
      secure.system.closeIgnoringErrors(opened.fd)
      let again = try secure.openFile("lock", in: store, [.readWrite, .create])
      secure.system.closeIgnoringErrors(again.fd)
      let exclusive = try secure.openFile("new", in: store, [.writeOnly, .create, .exclusive])
      secure.system.closeIgnoringErrors(exclusive.fd)
      secure.system.closeIgnoringErrors(try secure.createExclusive("temporary", in: store))
    }
    #expect(try Self.wrongModes(under: path) == [])
    #expect(chmod(path + "/lock", 0) == 0)
    let secure = SecureStoreFiles()
    let store = try secure.openDirectory(atPath: path, creating: false)
    defer { secure.close(store) }
    if geteuid() == 0 {
      let offline = try secure.openFile("lock", in: store, .readOnly)
      secure.system.closeIgnoringErrors(offline.fd)
      #expect(Self.entry(path + "/lock")?.permissions == 0, "the offline open changed no mode")
    }
    let online = try secure.openOrReplaceFile("lock", in: store, [.readWrite, .create])
    secure.system.closeIgnoringErrors(online.fd)
    #expect(Self.entry(path + "/lock")?.permissions == 0o600)
  }
}
