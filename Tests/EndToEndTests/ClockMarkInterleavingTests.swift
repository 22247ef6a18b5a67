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

  /// Which `flock` of `read` is delayed while a sign-in writes a new token. A `read` makes five:
  /// 1 the open's observation (`LOCK_EX`), 2 the reader's recheck of the stored mark (the mark
  /// store's read without waiting, `LOCK_SH|LOCK_NB`; the sign-in lands between the open and the
  /// read), 3 its `LOCK_UN`, 4 the mark read after the item (`LOCK_SH|LOCK_NB`; the sign-in
  /// lands after the item was read), 5 its `LOCK_UN`. Delaying 3 would hold the shared lock
  /// and keep the sign-in out of the gap.
  enum ReadLock: Int, CaseIterable, CustomStringConvertible {
    case recheck = 2
    case afterTheItem = 4
    var description: String { self == .recheck ? "recheck" : "after the item" }
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

    let strace = [
      "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=flock", "-e",
      "inject=flock:delay_enter=4000000:when=\(delayed.rawValue)",
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
