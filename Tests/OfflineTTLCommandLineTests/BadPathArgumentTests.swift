import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

#if canImport(Glibc)
  import Glibc
#endif

/// Path options that name nothing usable: an empty path is a usage error (exit 64) for every
/// command and every path option, before any store is looked at (the C library would read it
/// as the working directory for some calls, as missing for others); an unusable `--seal` key
/// makes `demo` fail as the environment's failure (exit 74) before its story, never as a bug
/// (exit 70).
@Suite struct BadPathArgumentTests {
  static let emptyPaths: [[String]] = [
    ["sign-in", "--store="],
    ["sign-in", "--store", ""],
    ["status", "--store=", "--max-age", "7d"],
    ["read", "--store", "", "--max-age", "7d", "token"],
    ["mark", "observe", "--store", ""],
    ["mark", "show", "--store="],
    ["mark", "reset", "--store", ""],
    ["sign-in", "--store", "/nonexistent-parent/s", "--seal", "file:"],
    ["status", "--store", "/nonexistent-parent/s", "--max-age", "7d", "--seal=file:"],
    ["demo", "--seal", "file:"],
    ["sign-in", "--store", "/nonexistent-parent/s", "--put", "token="],
  ]

  @Test(arguments: emptyPaths)
  func anEmptyPathIsAUsageError(_ arguments: [String]) {
    let run = runCommand(arguments, clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .usage, "\(arguments): \(run.standardError)")
    #expect(run.standardError.hasPrefix("error: --"), "\(run.standardError)")
    #expect(run.standardError.contains("empty path"), "\(run.standardError)")
    #expect(run.standardOutput.isEmpty)
  }

  /// `demo --seal` with a key that cannot be had or made: exit 74 and one error line, before the
  /// story's table (the outside tester's `file:klnk/..` exited 70 after the header).
  @Test(arguments: ["link/..", "missing-directory/key", "open/key", "dir/", "hard/key"])
  func demoWithAnUnusableKeyFailsAsTheEnvironment(_ key: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-demo-seal")
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.appending("target"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.appending("link"), withDestinationPath: scratch.appending("target"))
    try FileManager.default.createDirectory(
      atPath: scratch.appending("open"), withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o777])
    #expect(chmod(scratch.appending("open"), 0o777) == 0)
    try FileManager.default.createDirectory(
      atPath: scratch.appending("dir"), withIntermediateDirectories: false)
    try FileManager.default.createDirectory(
      atPath: scratch.appending("hard"), withIntermediateDirectories: false)
    _ = try FileSealingKeyProvider(path: scratch.appending("hard/key")).loadOrCreateKey()
    #expect(link(scratch.appending("hard/key"), scratch.appending("hard/copy")) == 0)
    let run = runCommand(
      ["demo", "--seal", "file:" + scratch.appending(key)],
      clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .ioError, "\(key): \(run.standardError)")
    #expect(run.standardOutput.isEmpty, "\(key): \(run.standardOutput)")
    #expect(
      run.standardError.hasPrefix("error: --seal: key_unavailable: key_"), "\(run.standardError)")
  }

  /// A sign-in makes a new store only in a directory of its own: one that already holds other
  /// entries and no store (`/dev` as root, a home directory) is refused with exit 74 and left
  /// exactly as it was; an empty one, one with only the clock-mark files or the keyring key's
  /// lock file, and an existing store with entries of its user's beside it are used.
  @Test(arguments: ["sign-in", "mark-reset"])
  func aNewStoreIsNeverMadeAmongAnotherDirectorysEntries(_ command: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-foreign-directory")
    defer { scratch.remove() }
    let clock = ManualWallClock(storeCommandStart)
    func run(_ store: String) -> CommandRun {
      command == "sign-in"
        ? runCommand(["sign-in", "--store", store], clock: clock)
        : runCommand(["mark", "reset", "--store", store, "--now", "1700000000"], clock: clock)
    }
    let foreign = scratch.appending("foreign")
    try FileManager.default.createDirectory(
      atPath: foreign + "/sub", withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: foreign + "/null"))
    let refused = run(foreign)
    #expect(refused.exitCode == .ioError, "\(refused.standardError)")
    #expect(refused.standardError.contains("is not a store directory"), "\(refused.standardError)")
    #expect(refused.standardError.contains("\"null\""), "\(refused.standardError)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: foreign).sorted() == ["null", "sub"])
    // Empty, missing, or holding only what the clock-mark store makes: a new store.
    let empty = scratch.appending("empty")
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
    #expect(run(empty).exitCode == .success)
    #expect(run(scratch.appending("missing")).exitCode == .success)
    let marksOnly = scratch.appending("marks-only")
    try FileManager.default.createDirectory(atPath: marksOnly, withIntermediateDirectories: false)
    try Data().write(to: URL(fileURLWithPath: marksOnly + "/clock-mark.lock"))
    #expect(run(marksOnly).exitCode == .success)
    // Or the lock file that `--seal secret-service` makes there for its keyring key first.
    let keyringLocked = scratch.appending("keyring-locked")
    try FileManager.default.createDirectory(
      atPath: keyringLocked, withIntermediateDirectories: false)
    let lockName = KeyringLockFileName.name(
      applicationID: "offline-ttl-cli:" + keyringLocked, kind: "sealing-key")
    try Data().write(to: URL(fileURLWithPath: keyringLocked + "/" + lockName))
    #expect(run(keyringLocked).exitCode == .success)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: keyringLocked).contains(lockName))
    // An existing store keeps working with something else beside it.
    try Data("x".utf8).write(to: URL(fileURLWithPath: empty + "/notes"))
    #expect(run(empty).exitCode == .success)
  }

  /// `--seal file:` naming a key inside an existing store directory that has no `cache/` yet
  /// (a directory made for the store, the key put there first): `sign-in` (exit 74) and `mark
  /// reset` (exit 1) say `key_inside_store`, not `store_unusable` for the key file's name, and
  /// change nothing; the same key outside the directory signs in.
  @Test(arguments: ["sign-in", "mark-reset"])
  func aKeyInsideAnExistingStoreDirectoryIsNamedAsSuch(_ command: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-key-inside")
    defer { scratch.remove() }
    let clock = ManualWallClock(storeCommandStart)
    func run(_ store: String, key: String) -> CommandRun {
      let seal = ["--seal", "file:" + key]
      return command == "sign-in"
        ? runCommand(["sign-in", "--store", store] + seal, clock: clock)
        : runCommand(
          ["mark", "reset", "--store", store, "--now", "1700000000"] + seal, clock: clock)
    }
    for (name, keyPath) in [("alone", "k.key"), ("nested", "keys/k.key"), ("beside", "k.key")] {
      let store = scratch.appending(name)
      try FileManager.default.createDirectory(
        atPath: store + "/keys", withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      #expect(
        FileManager.default.createFile(
          atPath: store + "/" + keyPath, contents: Data(repeating: 3, count: 32),
          attributes: [.posixPermissions: 0o600]))
      if name == "beside" { try Data("x".utf8).write(to: URL(fileURLWithPath: store + "/notes")) }
      let before = try StoreBytes(store)
      let refused = run(store, key: store + "/" + keyPath)
      // `mark reset` refuses as every refused observation or reset does: exit 1.
      #expect(
        refused.exitCode == (command == "sign-in" ? .ioError : .expired),
        "\(name): \(refused.standardError)")
      #expect(
        refused.standardError.contains("key_inside_store"), "\(name): \(refused.standardError)")
      #expect(
        !refused.standardError.contains("is not a store directory"),
        "\(name): \(refused.standardError)")
      #expect(try StoreBytes(store) == before, "\(name): nothing written")
    }
    // The same key outside: a new store.
    let outside = scratch.appending("k.key")
    try FileManager.default.moveItem(atPath: scratch.appending("alone/k.key"), toPath: outside)
    try FileManager.default.removeItem(atPath: scratch.appending("alone/keys"))
    let signed = run(scratch.appending("alone"), key: outside)
    #expect(signed.exitCode == .success, "\(signed.standardError)")
  }
}
