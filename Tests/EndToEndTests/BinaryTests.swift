import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// `offline-ttl` as users run it: exit codes and exact output of the built binary.
@Suite struct BinaryTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  @Test func seedExampleReportsExpiredWithMark200AndExits1() throws {
    let run = try binary.run([
      "evaluate", "--written-at", "100", "--now", "190", "--mark", "200", "--max-age", "1000",
    ])
    #expect(run.exitCode == 1)
    #expect(run.standardOutput == "status: expired\nmark: 200\nreasons: clock_behind_mark\n")
    #expect(run.standardError == "")
  }

  @Test func seedExampleAsJSONAndThenRepeatedWithTheReturnedMark() throws {
    let first = try binary.run([
      "evaluate", "--written-at", "100", "--now", "190", "--mark", "200", "--max-age", "1000",
      "--json",
    ])
    #expect(
      first.standardOutput == #"{"status":"expired","mark":200,"reasons":["clock_behind_mark"]}"#
        + "\n")
    // The second read with the returned mark is refused again and keeps the mark.
    let second = try binary.run([
      "evaluate", "--written-at", "100", "--now", "190", "--mark", "200", "--max-age", "1000",
      "--json",
    ])
    #expect(second.exitCode == 1)
    #expect(second.standardOutput == first.standardOutput)
  }

  @Test func freshExits0AndUnavailableExits2() throws {
    let fresh = try binary.run(["evaluate", "--written-at=100", "--now=1100", "--max-age=1000"])
    #expect(fresh.exitCode == 0)
    #expect(fresh.standardOutput == "status: fresh\nmark: 1100\nreasons: none\ndeadline: 1100\n")
    let unavailable = try binary.run(["evaluate", "--now", "1", "--max-age", "1"])
    #expect(unavailable.exitCode == 2)
    #expect(unavailable.standardOutput == "status: unavailable\nmark: none\nreasons: none\n")
  }

  @Test func helpIsOnStandardOutputWithExit0() throws {
    for arguments in [["--help"], ["-h"], ["evaluate", "--help"], ["evaluate", "-h"]] {
      let run = try binary.run(arguments)
      #expect(run.exitCode == 0, "\(arguments)")
      #expect(run.standardOutput.hasPrefix("OVERVIEW: "), "\(arguments)")
      #expect(run.standardError == "")
    }
  }

  @Test func usageErrorsExit64WithErrorAndUsageOnStandardError() throws {
    let run = try binary.run(["evaluate", "--now", "1", "--max-age", "-1"])
    #expect(run.exitCode == 64)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError == """
        error: --max-age: -1 is negative; a max age must be zero or more
        usage: offline-ttl evaluate [--written-at <t> ...] --now <t> [--mark <t>] --max-age <duration|n> [options]
               offline-ttl evaluate --batch [--unit s|ms|ns]
        See 'offline-ttl evaluate --help'.

        """)
    let none = try binary.run([])
    #expect(none.exitCode == 64)
    #expect(none.standardError.hasPrefix("error: missing subcommand\n"))
  }

  @Test func batchWritesOneLinePerCaseAndExits65WhenALineIsBad() throws {
    let input = """
      {"written_at":[100],"now":190,"mark":200,"max_age":1000}

      {"written_at":[100],"now":190,"mark":200}
      {"written_at":[100],"now":1100,"mark":null,"max_age":1000}
      """
    let run = try binary.run(["evaluate", "--batch"], input: input)
    #expect(run.exitCode == 65)
    #expect(
      run.standardOutput == """
        {"status":"expired","mark":200,"reasons":["clock_behind_mark"]}
        {"error":"line 3: missing field \\"max_age\\""}
        {"status":"fresh","mark":1100,"reasons":[]}

        """)
    let good = try binary.run(
      ["evaluate", "--batch"], input: #"{"written_at":[],"now":1,"mark":null,"max_age":0}"#)
    #expect(good.exitCode == 0)
    #expect(good.standardOutput == #"{"status":"unavailable","mark":null,"reasons":[]}"# + "\n")
  }

  /// `--batch` keeps a line of exactly 16 MiB (16,777,216 bytes before its newline) and refuses
  /// one of a byte more, as the README says; the lines around both are evaluated.
  @Test func batchKeepsALineOfSixteenMebibytesAndRefusesOneByteMore() throws {
    let limit = 16 * 1024 * 1024
    let head = #"{"written_at":[100],"now":190,"mark":null,"max_age":1000"#
    // JSON whitespace fills a valid case up to the length wanted.
    func line(_ length: Int) -> String {
      head + String(repeating: " ", count: length - head.utf8.count - 1) + "}"
    }
    let fresh = #"{"status":"fresh","mark":190,"reasons":[]}"#
    let run = try binary.run(
      ["evaluate", "--batch"],
      input: line(limit) + "\n" + line(limit + 1) + "\n" + line(limit - 1) + "\n" + line(100)
        + "\n" + line(limit + 1))
    #expect(run.exitCode == 65, "\(run.standardError)")
    let skipped = #"{"error":"line 2: longer than 16777216 bytes; skipped"}"#
    let last = #"{"error":"line 5: longer than 16777216 bytes; skipped"}"#
    #expect(
      run.standardOutput.split(separator: "\n").map(String.init)
        == [fresh, skipped, fresh, fresh, last])
  }

  @Test func aHungProcessIsKilledAtItsTimeout() throws {
    // The launcher replaces the binary with a process that outlives the timeout.
    let process = try binary.run(
      ["evaluate"], launcher: ["sh", "-c", "exec sleep 30"], timeout: .milliseconds(300))
    #expect(process.timedOut)
    #expect(process.exitCode == nil)
    // Killed, not waited for: `sleep 30` would have run 30 s.
    #expect(process.elapsed < .seconds(29))
  }
}

extension BinaryTests {
  @Test(.enabled(if: devFullIsAvailable, "/dev/full (always full) is not available"))
  func anUnwritableStandardOutputExits74() throws {
    let run = try binary.run(
      ["evaluate", "--now", "1", "--max-age", "1"],
      launcher: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"])
    #expect(run.exitCode == 74)
    #expect(run.standardError == "error: cannot write standard output\n")
  }
}

extension BinaryTests {
  @Test func versionOfTheBuiltBinaryIsTheLibraryConstant() throws {
    let run = try binary.run(["--version"])
    #expect(run.exitCode == 0)
    #expect(run.standardOutput == "offline-ttl \(OfflineTTLVersion.current)\n")
  }
}

extension BinaryTests {
  @Test(.enabled(if: devFullIsAvailable, "/dev/full (always full) is not available"))
  func aCommittedSignInWithAnUnwritableStandardOutputSaysSoAndExits3() throws {
    let store = try TemporaryStoreDirectory(prefix: "offline-ttl-full")
    defer { store.remove() }
    let signIn = try binary.run(
      ["sign-in", "--store", store.appending("s")],
      launcher: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"])
    #expect(signIn.exitCode == 3)
    #expect(
      signIn.standardError.hasPrefix(
        "error: cannot write standard output, but the sign-in was committed: generation 1, mark "))
    #expect(!signIn.standardError.contains("error: cannot write standard output\n"))
    let show = try binary.run(["mark", "show", "--store", store.appending("s")])
    #expect(show.standardOutput.hasSuffix(" generation 1\n"))
    let reset = try binary.run(
      ["mark", "reset", "--store", store.appending("s"), "--now", "5"],
      launcher: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"])
    #expect(reset.exitCode == 3)
    #expect(
      reset.standardError
        == "error: cannot write standard output, but the mark was written: mark 5 generation 2\n")
    // A command that commits nothing still exits 74.
    let status = try binary.run(
      ["status", "--store", store.appending("s"), "--max-age", "7d"],
      launcher: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"])
    #expect(status.exitCode == 74)
  }

  @Test func anEmptyTMPDIRPutsTheDemoStoreInTmpNotTheRoot() throws {
    let run = try binary.run(["demo"], environment: ["TMPDIR": ""])
    #expect(run.exitCode == 0)
    #expect(
      run.standardOutput.hasPrefix("offline-ttl demo: a fresh store in /tmp/offline-ttl-demo-"))
  }
}

/// Whether `/dev/full` exists here (every write to it fails with ENOSPC).
let devFullIsAvailable = FileManager.default.isWritableFile(atPath: "/dev/full")
