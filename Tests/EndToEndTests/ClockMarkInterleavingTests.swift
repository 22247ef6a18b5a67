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
/// `status`) raises the mark during the delay. The trace's entry time of the delayed call tells
/// whether the competitor ran inside the delay; when it did not (a loaded machine), the run is
/// checked for what holds in any order and tried again with a longer delay (8, 16, 32 s). A reading of the clock taken before that lock
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

  /// One run of a command with one of its system calls delayed by `strace`, and a competitor
  /// run meanwhile.
  struct Interleaving {
    /// The delayed command's result.
    let delayed: BinaryResult
    /// The competitor's result.
    let competitor: BinaryResult
    /// Whether `strace` delayed the call (its trace marks one call `(DELAYED)`).
    let wasDelayed: Bool
    /// Whether the competitor started after the delayed call was entered and ended before the
    /// delay did: the interleaving under test happened. On a loaded machine it may not (the
    /// competitor took longer than the delay, or started before the delayed command got there).
    let competitorRanInTheDelay: Bool
  }

  /// The delays tried in turn, in seconds, until the competitor runs inside one: the first
  /// suits a quiet machine, the longer ones a loaded one.
  static let delays: [Int] = [4, 8, 16, 32]

  /// Runs `arguments` with the `number`th `call` delayed by `delay` seconds (`strace -e
  /// inject`), and `competitor` about halfway into the delay; tells from the trace's entry time
  /// of the delayed call (`-ttt`, the real clock, like `Date`) whether the competitor ran
  /// inside the delay. Every wait is bounded (``BinaryRunner/hangBound`` plus the delay).
  static func interleave(
    _ arguments: [String], call: String, number: Int, delay: Int, runner: BinaryRunner,
    scratch: TemporaryStoreDirectory, competitor: () throws -> BinaryResult
  ) throws -> Interleaving {
    let trace = scratch.appending("trace-\(call)-\(number)-\(delay)")
    let strace = [
      "strace", "-f", "-qq", "-ttt", "-o", trace, "-e", "trace=\(call)", "-e",
      "inject=\(call):delay_enter=\(delay * 1_000_000):when=\(number)",
    ]
    let bound = BinaryRunner.hangBound + .seconds(delay)
    let result = Mutex<BinaryResult?>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      let outcome = try? runner.run(arguments, launcher: strace, timeout: bound)
      result.withLock { $0 = outcome }
      done.signal()
    }
    Thread.sleep(forTimeInterval: Double(delay) / 2)
    let started = Date().timeIntervalSince1970
    let other = try competitor()
    let ended = Date().timeIntervalSince1970
    let waited = done.wait(timeout: .now() + .seconds(Int(bound.components.seconds) + 60))
    try #require(waited == .success, "the delayed command's runner never returned")
    let delayedRun = try #require(result.withLock { $0 }, "the delayed command ran")
    let delayedLine = ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "")
      .split(separator: "\n").first { $0.contains("(DELAYED)") }
    // `PID SECONDS.MICROSECONDS call(...) = ... (DELAYED)`
    let entered = delayedLine.flatMap { line in
      line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
    }
    let inside = entered.map { started >= $0 && ended <= $0 + Double(delay) } ?? false
    return Interleaving(
      delayed: delayedRun, competitor: other, wasDelayed: delayedLine != nil,
      competitorRanInTheDelay: inside)
  }

  @Test(arguments: Delayed.allCases, Competitor.allCases)
  func aMarkRaisedWhileTheLockWaitsIsNoRollback(_ delayed: Delayed, _ competitor: Competitor)
    throws
  {
    let signedIn = try SignedInStore(prefix: "offline-ttl-e2e-interleave")
    defer { signedIn.remove() }
    let (scratch, store, runner) = (signedIn.scratch, signedIn.store, signedIn.runner)

    let arguments =
      delayed == .read
      ? ["read", "--store", store, "--max-age", "1d", "token"]
      : ["status", "--store", store, "--max-age", "1d"]
    var happened = false
    for delay in Self.delays where !happened {
      // At least a second between the last mark and the competitor's, so that the
      // competitor's observation is written (the default mark resolution is 1 s).
      Thread.sleep(forTimeInterval: 1.2)
      let run = try Self.interleave(
        arguments, call: "flock", number: delayed.flockNumber, delay: delay, runner: runner,
        scratch: scratch
      ) {
        competitor == .signIn
          ? try runner.run(["sign-in", "--store", store])
          : try runner.run(["status", "--store", store, "--max-age", "1d"])
      }
      let other = run.competitor
      #expect(other.exitCode == 0, "\(other.standardOutput) \(other.standardError)")
      // Fresh whatever the interleaving, every run.
      let delayedRun = run.delayed
      #expect(
        delayedRun.exitCode == 0, "\(delayedRun.standardOutput) \(delayedRun.standardError)")
      #expect(
        !delayedRun.standardError.contains("clock_behind_mark"), "\(delayedRun.standardError)")
      #expect(!delayedRun.standardOutput.contains("clock_behind_mark"))
      if delayed == .read {
        #expect(delayedRun.standardOutput == "secret-token", "\(delayedRun.standardOutput)")
      } else {
        #expect(
          delayedRun.standardOutput.hasPrefix("status: fresh"), "\(delayedRun.standardOutput)")
      }
      #expect(run.wasDelayed, "strace delayed the lock")
      #expect(delayedRun.elapsed >= .seconds(delay), "strace delayed the lock")
      happened = run.competitorRanInTheDelay
    }
    #expect(happened, "the competitor never ran inside the delay (delays \(Self.delays) s)")
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
    let old = scratch.appending("old.txt")
    let new = scratch.appending("new.txt")
    try Data("old-token".utf8).write(to: URL(fileURLWithPath: old))
    try Data("new-token".utf8).write(to: URL(fileURLWithPath: new))
    let runner = try BinaryRunner()
    let newBase64 = Data("new-token".utf8).base64EncodedString()
    let oldBase64 = Data("old-token".utf8).base64EncodedString()
    var happened = false
    for delay in Self.delays where !happened {
      // A new store each try: the old token in generation 1, the new one in generation 2.
      let store = scratch.appending("store-\(delay)")
      let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(old)"])
      #expect(signIn.exitCode == 0, "\(signIn.standardError)")
      let (call, number) = try Self.delayedCall(delayed, store: store, runner: runner)
      let run = try Self.interleave(
        ["read", "--store", store, "--max-age", "1d", "--json", "token"], call: call,
        number: number, delay: delay, runner: runner, scratch: scratch
      ) {
        try runner.run(["sign-in", "--store", store, "--put", "token=\(new)"])
      }
      let other = run.competitor
      #expect(other.exitCode == 0, "\(other.standardOutput) \(other.standardError)")
      let read = run.delayed
      #expect(read.exitCode == 0, "\(read.standardOutput) \(read.standardError)")
      #expect(run.wasDelayed, "strace delayed the \(call)")
      #expect(read.elapsed >= .seconds(delay), "strace delayed the \(call)")
      let servedNew = read.standardOutput.contains(#""payload_base64":"\#(newBase64)""#)
      let servedOld = read.standardOutput.contains(#""payload_base64":"\#(oldBase64)""#)
      happened = run.competitorRanInTheDelay
      // The sign-in committed while the read waited: its set, with its decision. Otherwise
      // (it ran before or after the read on a loaded machine) either token, each with its own
      // set's decision, never the new token with the old decision.
      #expect(servedNew || (servedOld && !happened), "\(read.standardOutput)")
      let generation = servedNew ? 2 : 1
      #expect(
        read.standardOutput.contains(#""generation":\#(generation),"#), "\(read.standardOutput)")
    }
    #expect(happened, "the sign-in never ran inside the delay (delays \(Self.delays) s)")
  }
}
