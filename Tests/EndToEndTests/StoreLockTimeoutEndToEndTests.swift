import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The store locks' time limit on the built `offline-ttl`: a process that holds a store's lock and
/// is stopped with `SIGSTOP` (`flock(1)` holding it, then stopped) makes `status`, `read`,
/// `sign-in` and `mark observe` end within `--lock-timeout` with `lock_timed_out` and exit 74,
/// never `fresh`, with the store's bytes unchanged; once the holder is gone the store answers
/// again. Each child is killed after 30 s, far beyond every limit here.
@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"),
    "needs flock(1) (util-linux)"))
struct StoreLockTimeoutEndToEndTests {
  static let childBound: Duration = .seconds(30)
  /// How late past its limit a refused command may end on a loaded machine.
  static let slack: Duration = .seconds(4)

  /// A shell that holds `path` with `flock(1)` on a descriptor of its own and then stops itself
  /// with `SIGSTOP` (no child holds the lock).
  final class StoppedHolder {
    let process = Process()

    init(_ path: String) throws {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", "exec 9<\"$0\" && flock -x 9 && kill -STOP $$", path]
      try process.run()
      // Wait (at most 10 s) until the shell holds the lock and has stopped.
      let probe = open(path, O_RDONLY | O_CLOEXEC)
      try #require(probe >= 0)
      defer { close(probe) }
      let deadline = ContinuousClock.now + .seconds(10)
      while flock(probe, LOCK_SH | LOCK_NB) == 0 || state() != "T" {
        flock(probe, LOCK_UN)
        try #require(ContinuousClock.now < deadline, "the holder did not take \(path) in 10 s")
        usleep(10_000)
      }
    }

    /// The process's state letter from `/proc/<pid>/stat` (`T`: stopped, `Z`: ended), or `nil`
    /// when it is gone.
    func state() -> Character? {
      guard
        let text = try? String(
          contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
      else { return nil }
      return text[close...].dropFirst(2).first
    }

    /// Kills the holder (by its pid) and waits at most 10 s for it to end.
    func end() {
      _ = Glibc.kill(process.processIdentifier, SIGKILL)
      let deadline = ContinuousClock.now + .seconds(10)
      while let state = state(), state != "Z", ContinuousClock.now < deadline { usleep(10_000) }
      #expect(state() == nil || state() == "Z", "the holder outlived SIGKILL")
    }

    deinit { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
  }

  /// A signed-in store (one item `token`) in a scratch directory.
  struct Store {
    let scratch: TemporaryStoreDirectory
    let path: String
    let input: String

    init() throws {
      scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-lock-limit")
      path = scratch.appending("store")
      input = scratch.appending("token.txt")
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let signIn = try run(["sign-in", "--store", path, "--put", "token=\(input)"])
      #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    }

    func run(_ arguments: [String]) throws -> BinaryResult {
      let result = try BinaryRunner().run(
        arguments, timeout: StoreLockTimeoutEndToEndTests.childBound)
      #expect(!result.timedOut, "\(arguments) outlived \(StoreLockTimeoutEndToEndTests.childBound)")
      return result
    }

    /// Every file of the store with its bytes.
    func snapshot() throws -> [String: Data] {
      var files: [String: Data] = [:]
      let walker = try #require(FileManager.default.enumerator(atPath: path))
      for case let name as String in walker {
        let full = path + "/" + name
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory),
          !isDirectory.boolValue
        {
          files[name] = try Data(contentsOf: URL(fileURLWithPath: full))
        }
      }
      return files
    }
  }

  @Test(arguments: ["clock-mark.lock", "cache/lock"])
  func aStoppedHolderOfAStoreLockIsRefusedWithinTheLimit(lock: String) throws {
    let store = try Store()
    defer { store.scratch.remove() }
    let before = try store.snapshot()
    let holder = try StoppedHolder(store.path + "/" + lock)
    defer { holder.end() }
    let limit = ["--lock-timeout", "500ms"]

    if lock == "clock-mark.lock" {
      let status = try store.run(
        ["status", "--store", store.path, "--max-age", "7d", "--json"] + limit)
      #expect(status.exitCode == 74, "\(status.standardOutput) \(status.standardError)")
      let object = try status.jsonObject()
      #expect(object["status"] as? String == "expired", "\(status.standardOutput)")
      #expect(
        (object["mark_error"] as? String)?.hasPrefix("lock_timed_out: ") == true,
        "\(status.standardOutput)")
      #expect(status.standardError.contains("lock_timed_out"), "\(status.standardError)")
      #expect(status.elapsed < .milliseconds(500) + Self.slack, "\(status.elapsed)")

      let read = try store.run(["read", "--store", store.path, "--max-age", "7d", "token"] + limit)
      #expect(read.exitCode == 74, "\(read.standardError)")
      #expect(read.standardOutput.isEmpty, "no byte of the item is served")
      #expect(read.standardError.contains("lock_timed_out"), "\(read.standardError)")
      #expect(read.elapsed < .milliseconds(500) + Self.slack, "\(read.elapsed)")

      let now = String(Int(Date().timeIntervalSince1970))
      let observe = try store.run(["mark", "observe", "--store", store.path, "--now", now] + limit)
      #expect(observe.exitCode == 74, "\(observe.standardOutput) \(observe.standardError)")
      #expect(observe.standardError.contains("lock_timed_out"), "\(observe.standardError)")
    }

    let signIn = try store.run(
      ["sign-in", "--store", store.path, "--put", "token=\(store.input)"] + limit)
    #expect(signIn.exitCode == 74, "\(signIn.standardOutput) \(signIn.standardError)")
    #expect(signIn.standardError.contains("lock_timed_out"), "\(signIn.standardError)")
    #expect(signIn.elapsed < .milliseconds(500) + Self.slack, "\(signIn.elapsed)")
    if lock == "cache/lock" {
      #expect(try store.snapshot() == before, "nothing written or deleted")
    }

    holder.end()
    let after = try store.run(["read", "--store", store.path, "--max-age", "7d", "token"] + limit)
    #expect(after.exitCode == 0, "\(after.standardOutput) \(after.standardError)")
    #expect(after.standardOutput == "secret-token", "the refused sign-in committed nothing")
  }

  /// A sealed `mark reset` checks its key against the items before it resets (the sealed index
  /// is read with the mark's lock): a held `clock-mark.lock` ends it at one limit, not two
  /// (the outside tester measured 6.1 s for `--lock-timeout 3s`).
  @Test func aSealedMarkResetBehindAHeldMarkLockWaitsTheLimitOnce() throws {
    let store = try Store()
    defer { store.scratch.remove() }
    let seal = ["--seal", "file:" + store.scratch.appending("key")]
    let sealed = store.scratch.appending("sealed")
    let signIn = try store.run(
      ["sign-in", "--store", sealed, "--put", "token=\(store.input)"] + seal)
    try #require(signIn.exitCode == 0, "\(signIn.standardError)")
    let holder = try StoppedHolder(sealed + "/clock-mark.lock")
    defer { holder.end() }
    let now = String(Int(Date().timeIntervalSince1970))
    let reset = try store.run(
      ["mark", "reset", "--store", sealed, "--now", now, "--lock-timeout", "4s"] + seal)
    #expect(reset.exitCode == 74, "\(reset.standardOutput) \(reset.standardError)")
    #expect(reset.standardError.contains("lock_timed_out"), "\(reset.standardError)")
    #expect(reset.elapsed >= .seconds(4), "\(reset.elapsed)")
    // Twice the limit would be 8 s.
    #expect(reset.elapsed < .milliseconds(7_500), "\(reset.elapsed)")
  }

  @Test(arguments: ["-1s", "2h", "soon"])
  func aLockTimeoutOutOfRangeIsAUsageError(value: String) throws {
    let result = try BinaryRunner().run(
      ["status", "--store", "/nonexistent", "--max-age", "7d", "--lock-timeout", value],
      timeout: Self.childBound)
    #expect(result.exitCode == 64, "\(result.standardError)")
    #expect(result.standardError.hasPrefix("error: --lock-timeout: "), "\(result.standardError)")
  }
}
