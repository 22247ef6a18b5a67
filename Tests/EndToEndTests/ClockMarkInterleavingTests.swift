import Dispatch
import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

/// Whether a system tool is on `PATH`, without printing anything (for `.enabled(if:)`).
func toolIsInstalled(_ name: String) -> Bool {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
  return path.split(separator: ":").contains {
    FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
  }
}

/// The interleaving that made an honest `read` look like a rollback, forced on the built binary:
/// `strace` delays one `flock` of the command under test by 4 s, and a competitor (`sign-in` or
/// `status`) raises the mark during the delay. A reading of the clock taken before that lock
/// would be older than the competitor's mark; taken under the lock, or after the stored mark, it
/// never is, so the answer is fresh every time.
@Suite(.enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"))
struct ClockMarkInterleavingTests {
  /// The command whose lock is delayed, and which of its `flock` calls to delay.
  enum Delayed: String, CaseIterable, CustomStringConvertible {
    /// `read`: the second `flock` is the reader's recheck of the stored mark.
    case read
    /// `status`: its only `flock` is the observation's.
    case status
    var description: String { rawValue }
    var flockNumber: Int { self == .read ? 2 : 1 }
  }

  /// The command run while the lock is delayed.
  enum Competitor: String, CaseIterable, CustomStringConvertible {
    case signIn = "sign-in"
    case status
    var description: String { rawValue }
  }

  @Test(arguments: Delayed.allCases, Competitor.allCases)
  func aMarkRaisedWhileTheLockWaitsIsNoRollback(_ delayed: Delayed, _ competitor: Competitor)
    throws
  {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-interleave")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    let runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    // At least a second between the sign-in's mark and the competitor's, so that the
    // competitor's observation is written (the default mark resolution is 1 s).
    Thread.sleep(forTimeInterval: 1.2)

    let arguments =
      delayed == .read
      ? ["read", "--store", store, "--max-age", "1d", "token"]
      : ["status", "--store", store, "--max-age", "1d"]
    let strace = [
      "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=flock", "-e",
      "inject=flock:delay_enter=4000000:when=\(delayed.flockNumber)",
    ]
    let result = Mutex<BinaryResult?>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      let outcome = try? runner.run(arguments, launcher: strace, timeout: .seconds(60))
      result.withLock { $0 = outcome }
      done.signal()
    }
    // Run the competitor while the delayed command waits for its lock.
    Thread.sleep(forTimeInterval: 2)
    let other =
      competitor == .signIn
      ? try runner.run(["sign-in", "--store", store])
      : try runner.run(["status", "--store", store, "--max-age", "1d"])
    #expect(other.exitCode == 0, "\(other.standardOutput) \(other.standardError)")
    done.wait()

    let delayedRun = try #require(result.withLock { $0 }, "the delayed command ran")
    #expect(delayedRun.exitCode == 0, "\(delayedRun.standardOutput) \(delayedRun.standardError)")
    #expect(!delayedRun.standardError.contains("clock_behind_mark"), "\(delayedRun.standardError)")
    #expect(!delayedRun.standardOutput.contains("clock_behind_mark"))
    if delayed == .read {
      #expect(delayedRun.standardOutput == "secret-token", "\(delayedRun.standardOutput)")
    } else {
      #expect(delayedRun.standardOutput.hasPrefix("status: fresh"), "\(delayedRun.standardOutput)")
    }
    #expect(delayedRun.elapsed >= .seconds(4), "strace delayed the lock")
  }

  /// Which read of the stored mark by `read` is delayed while a sign-in writes a new token.
  /// A `read` observes the mark when it opens (1 `flock(LOCK_EX)`), then reads it again before
  /// the item (the recheck: the mark store's read without waiting, `flock(LOCK_SH|LOCK_NB)` as
  /// its 2nd `flock`, released by the 3rd; the sign-in lands between the open and the read) and
  /// once more after the item (the sign-in lands after the item was read). On a local file
  /// system that last read reuses the recheck's record while the store's change watch reports
  /// nothing: its only look at the store is one `poll` of the watch (the last `poll` of the
  /// command), which is delayed; elsewhere it is the 4th `flock`, `LOCK_SH|LOCK_NB` (delaying
  /// the 3rd would hold the shared lock and keep the sign-in out of the gap).
  enum ReadLock: CaseIterable, CustomStringConvertible {
    case recheck
    case afterTheItem
    var description: String { self == .recheck ? "recheck" : "after the item" }
  }

  /// The system call and its number (`strace`'s `when=`) that `delayed` names in a `read` of
  /// `store`, learned from one `read` under `strace` without a delay.
  static func delayedCall(_ delayed: ReadLock, store: String, runner: BinaryRunner) throws
    -> (call: String, number: Int)
  {
    if delayed == .recheck { return ("flock", 2) }
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-interleave-trace")
    defer { scratch.remove() }
    let trace = scratch.appending("trace")
    let dry = try runner.run(
      ["read", "--store", store, "--max-age", "1d", "token"],
      launcher: ["strace", "-f", "-qq", "-o", trace, "-e", "trace=poll"])
    #expect(dry.exitCode == 0, "\(dry.standardError)")
    let polls = try String(contentsOfFile: trace, encoding: .utf8)
      .split(separator: "\n").filter { $0.contains("poll(") }.count
    return polls > 0 ? ("poll", polls) : ("flock", 4)
  }

  /// A `read` opened before a sign-in that replaced the token serves the new token with the new
  /// set's decision (its generation), never the new token with the old decision nor the old
  /// token after the new sign-in committed.
  @Test(arguments: ReadLock.allCases)
  func aReadMeetingANewerSignInServesItsSetWithItsDecision(_ delayed: ReadLock) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-interleave")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let old = scratch.appending("old.txt")
    let new = scratch.appending("new.txt")
    try Data("old-token".utf8).write(to: URL(fileURLWithPath: old))
    try Data("new-token".utf8).write(to: URL(fileURLWithPath: new))
    let runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(old)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")

    let (call, number) = try Self.delayedCall(delayed, store: store, runner: runner)
    let strace = [
      "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(call)", "-e",
      "inject=\(call):delay_enter=4000000:when=\(number)",
    ]
    let result = Mutex<BinaryResult?>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      let outcome = try? runner.run(
        ["read", "--store", store, "--max-age", "1d", "--json", "token"], launcher: strace,
        timeout: .seconds(60))
      result.withLock { $0 = outcome }
      done.signal()
    }
    Thread.sleep(forTimeInterval: 2)
    let other = try runner.run(["sign-in", "--store", store, "--put", "token=\(new)"])
    #expect(other.exitCode == 0, "\(other.standardOutput) \(other.standardError)")
    done.wait()

    let read = try #require(result.withLock { $0 }, "the delayed read ran")
    #expect(read.exitCode == 0, "\(read.standardOutput) \(read.standardError)")
    let newBase64 = Data("new-token".utf8).base64EncodedString()
    #expect(
      read.standardOutput.contains(#""payload_base64":"\#(newBase64)""#), "\(read.standardOutput)")
    #expect(read.standardOutput.contains(#""generation":2,"#), "\(read.standardOutput)")
    #expect(read.elapsed >= .seconds(4), "strace delayed the lock")
  }
}
