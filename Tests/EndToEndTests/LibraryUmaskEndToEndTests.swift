import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The library (not the command-line tool, which sets `umask(077)` itself) run by a user other
/// than root under any umask, in a child process (`offline-ttl-store-probe`) started through
/// `setpriv` as uid 65534 and `sh -c 'umask <mask>; exec …'`: the umask of this test process is
/// never changed. Before, a directory the library made under `umask 777` had mode 0000, the
/// library then could not open it, and every later sign-in failed too (outside test 3, N3).
@Suite struct LibraryUmaskEndToEndTests {
  static let user = "65534"

  /// Whether the tests can run: root (to give the scratch directory to another user) and
  /// `setpriv` on the PATH.
  static var canRunAsAnotherUser: Bool {
    geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
  }

  struct Scene {
    let scratch: TemporaryStoreDirectory
    let probe: BinaryRunner
    var store: String { scratch.appending("store") }
    var key: String { scratch.appending("key") }

    init() throws {
      scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-library-umask")
      guard chown(scratch.path, 65_534, 65_534) == 0 else {
        throw BinaryRunnerError("cannot give \(scratch.path) to uid 65534")
      }
      // uid 65534 may not reach the build directory (a checkout under a 0700 directory, such
      // as one `mktemp -d` made): run a copy of the probe from the scratch directory.
      probe = try BinaryRunner("offline-ttl-store-probe").copy(
        to: scratch.appending("offline-ttl-store-probe"))
    }

    /// Runs the probe as uid 65534 under `umask mask` with `arguments` after the store path.
    func run(_ arguments: [String], umask mask: String = "022", sealed: Bool = false) throws
      -> BinaryResult
    {
      var tries = 0
      while true {
        let result = try probe.run(
          [store] + arguments + (sealed ? [key] : []),
          launcher: [
            "setpriv", "--reuid", LibraryUmaskEndToEndTests.user, "--regid",
            LibraryUmaskEndToEndTests.user, "--clear-groups", "sh", "-c",
            "umask \(mask); exec \"$@\"", "sh",
          ],
          timeout: .seconds(60))
        // The probe never ran: a child another test started was, for the microseconds from
        // its clone(2) to its execve(2), holding the close-on-exec descriptor the copy was
        // written through (see `BinaryRunner.copy(to:whileWriting:)`).
        tries += 1
        guard result.standardError.contains("Text file busy"), tries < 5 else { return result }
        usleep(20_000)
      }
    }

    /// `lstat` of a path in the store: its mode bits and owner.
    func entry(_ name: String) -> (permissions: UInt32, owner: UInt32)? {
      var info = stat()
      guard lstat(name.isEmpty ? store : store + "/" + name, &info) == 0 else { return nil }
      return (UInt32(info.st_mode) & 0o7777, info.st_uid)
    }

    /// Every path in the store (itself included) that is not a directory of mode 0700 or a
    /// regular file of mode 0600 owned by uid 65534.
    func wrongModes() throws -> [String] {
      var wrong: [String] = []
      for name in [""] + (try FileManager.default.subpathsOfDirectory(atPath: store)) {
        var info = stat()
        let path = name.isEmpty ? store : store + "/" + name
        guard lstat(path, &info) == 0 else {
          wrong.append("\(name): cannot lstat")
          continue
        }
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        let mode = UInt32(info.st_mode) & 0o7777
        let expected: UInt32? =
          type == UInt32(S_IFDIR) ? 0o700 : type == UInt32(S_IFREG) ? 0o600 : nil
        if mode != expected || info.st_uid != 65_534 {
          wrong.append(
            "\(name.isEmpty ? "." : name): 0\(String(mode, radix: 8)) uid \(info.st_uid)")
        }
      }
      return wrong
    }
  }

  /// As uid 65534 under umask 777, 277, 222, 377, 477, 022 and 000, with the store directory
  /// missing or made
  /// beforehand (0700, as in N3): sign-in, check, read, `mark reset`, a second sign-in, check and
  /// read all work, sealed (the key file made by the library) or not, and every directory is
  /// 0700 and every file 0600; a later check and read under umask 022 work.
  @Test(
    .enabled(if: canRunAsAnotherUser, "needs root and setpriv (util-linux) to run as uid 65534"),
    arguments: ["777", "277", "222", "377", "477", "022", "000"], [false, true])
  func theLibraryMakesAPrivateStoreUnderAnyUmaskForAnotherUser(mask: String, sealed: Bool)
    throws
  {
    let scene = try Scene()
    defer { scene.scratch.remove() }
    if mask == "777" {
      // N3's order: the store directory exists, `cache/` is the first thing made under 777.
      #expect(mkdir(scene.store, 0o700) == 0 && chown(scene.store, 65_534, 65_534) == 0)
    }
    var outputs: [String] = []
    for arguments in [
      ["sign-in", "token", "first"], ["check"], ["read", "token"], ["reset"],
      ["sign-in", "token", "second"], ["check"], ["read", "token"],
    ] {
      let result = try scene.run(arguments, umask: mask, sealed: sealed)
      #expect(result.exitCode == 0, "\(arguments): \(result.standardOutput)\(result.standardError)")
      outputs.append(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    #expect(
      outputs == [
        "ok signed-in", "ok fresh", "ok first", "ok reset", "ok signed-in", "ok fresh",
        "ok second",
      ])
    #expect(try scene.wrongModes() == [], "umask \(mask)")
    if sealed {
      var info = stat()
      #expect(lstat(scene.key, &info) == 0 && UInt32(info.st_mode) & 0o7777 == 0o600)
    }
    #expect(try scene.run(["check"], sealed: sealed).standardOutput == "ok fresh\n")
    #expect(try scene.run(["read", "token"], sealed: sealed).standardOutput == "ok second\n")
  }

  /// A directory of this user's store left at 0000 (what a umask of 777 made before): the
  /// offline check (for the store directory and `cache/`; the O(1) check does not open
  /// `items/`) and read are refused with `EACCES` and change no mode; the next sign-in gives
  /// the owner's bits back (0700), and the store reads fresh again; sealed or not.
  @Test(
    .enabled(if: canRunAsAnotherUser, "needs root and setpriv (util-linux) to run as uid 65534"),
    arguments: ["", "cache", "cache/items"], [false, true])
  func aZeroModeDirectoryIsRepairedBySignInAndRefusedOffline(directory: String, sealed: Bool)
    throws
  {
    let scene = try Scene()
    defer { scene.scratch.remove() }
    #expect(try scene.run(["sign-in", "token", "first"], sealed: sealed).exitCode == 0)
    let path = directory.isEmpty ? scene.store : scene.store + "/" + directory
    #expect(chmod(path, 0) == 0)
    // The O(1) check reads the index only: a 0000 `items/` is refused by the read.
    for arguments in directory == "cache/items"
      ? [["read", "token"]] : [["check"], ["read", "token"]]
    {
      let refused = try scene.run(arguments, sealed: sealed)
      #expect(refused.exitCode == 1, "\(arguments): \(refused.standardOutput)")
      #expect(refused.standardOutput.contains("EACCES"), "\(refused.standardOutput)")
      #expect(scene.entry(directory)?.permissions == 0, "the offline path changed no mode")
    }
    let signIn = try scene.run(["sign-in", "token", "second"], sealed: sealed)
    #expect(signIn.exitCode == 0, "\(signIn.standardOutput)")
    #expect(try scene.wrongModes() == [])
    #expect(try scene.run(["read", "token"], sealed: sealed).standardOutput == "ok second\n")
  }

  /// What a library without exact modes left behind under a umask (a lock file, the index and
  /// an item at 0400 under 222 or 377, or 0000 under 777 as their owner; the store directory at
  /// 0300 under 477; `cache/` at 0500 under 277, or 0600): the offline check and read change no mode,
  /// and the next sign-in leaves every directory 0700 and every file 0600, and reads fresh.
  @Test(
    .enabled(if: canRunAsAnotherUser, "needs root and setpriv (util-linux) to run as uid 65534"),
    arguments: ["files 0400", "files 0000", "store 0300", "cache 0500", "cache 0600"])
  func whatAnOlderLibraryLeftUnderAUmaskIsRepairedBySignIn(state: String) throws {
    let scene = try Scene()
    defer { scene.scratch.remove() }
    #expect(try scene.run(["sign-in", "token", "first"]).exitCode == 0)
    let changed: [(String, UInt32)]
    switch state {
    case "store 0300": changed = [("", 0o300)]
    case "cache 0500", "cache 0600": changed = [("cache", state.hasSuffix("0500") ? 0o500 : 0o600)]
    default:
      let mode: UInt32 = state == "files 0400" ? 0o400 : 0
      changed = ["cache/lock", "cache/index", "cache/items/token", "clock-mark.lock"].map {
        ($0, mode)
      }
    }
    for (name, mode) in changed {
      #expect(chmod(name.isEmpty ? scene.store : scene.store + "/" + name, mode_t(mode)) == 0)
    }
    _ = try scene.run(["check"])
    _ = try scene.run(["read", "token"])
    for (name, mode) in changed {
      #expect(scene.entry(name)?.permissions == mode, "\(name): the offline path changed a mode")
    }
    let signIn = try scene.run(["sign-in", "token", "second"])
    #expect(signIn.exitCode == 0, "\(state): \(signIn.standardOutput)")
    #expect(try scene.wrongModes() == [], "\(state)")
    #expect(try scene.run(["check"]).standardOutput == "ok fresh\n", "\(state)")
    #expect(try scene.run(["read", "token"]).standardOutput == "ok second\n", "\(state)")
  }

  /// What the sign-in still refuses: a directory of the store owned by root (another user here)
  /// at 0000, or one of this user that group or others may write, is `insecure_store`, and its
  /// mode and owner stay as they were.
  @Test(
    .enabled(if: canRunAsAnotherUser, "needs root and setpriv (util-linux) to run as uid 65534"),
    arguments: ["", "cache"], ["root 0000", "ours 0770"])
  func aDirectoryItCannotTrustIsStillRefused(directory: String, kind: String) throws {
    let scene = try Scene()
    defer { scene.scratch.remove() }
    #expect(try scene.run(["sign-in", "token", "first"]).exitCode == 0)
    let path = directory.isEmpty ? scene.store : scene.store + "/" + directory
    let rootOwned = kind.hasPrefix("root")
    if rootOwned { #expect(chown(path, 0, 0) == 0) }
    let mode: UInt32 = rootOwned ? 0 : 0o770
    #expect(chmod(path, mode_t(mode)) == 0)
    let signIn = try scene.run(["sign-in", "token", "second"])
    #expect(signIn.exitCode == 1)
    #expect(signIn.standardOutput.contains("insecure_store"), "\(signIn.standardOutput)")
    #expect(scene.entry(directory)?.permissions == mode)
    #expect(scene.entry(directory)?.owner == (rootOwned ? 0 : 65_534))
  }
}
