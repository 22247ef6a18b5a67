import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

@Suite struct StatusTests {
  @Test func freshPrintsEveryFieldAndExits0() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    clock.advance(by: .seconds(90))
    let run = runCommand(
      ["status", "--store", directory.appending("store"), "--max-age", "7d"], clock: clock)
    #expect(run.exitCode == .fresh)
    #expect(
      run.standardOutput == """
        status: fresh
        reasons: none
        now: 2023-11-14T22:14:50.000000000Z
        mark: 2023-11-14T22:14:50.000000000Z
        deadline: 2023-11-21T22:13:20.000000000Z (in 6d23h58m30s)
        generation: 1
        item_count: 1
        oldest: 2023-11-14T22:13:20.000000000Z (age 1m30s)
        max_age: 7d
        boot_floor: on
        floor: 2023-11-14T22:13:20.000000000Z
        boot_id: 00000000-0000-4000-8000-000000000001
        tolerance: 2s
        effective_now: 2023-11-14T22:14:50.000000000Z (from the wall clock)
        protections: mark_rule=active boot_clock_floor=active server_anchor=none tpm_clock=not_configured

        """)
    #expect(run.standardError == "")
  }

  @Test func jsonGivesEveryInstantTwice() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    clock.advance(by: .seconds(2 * 86_400))
    let run = runCommand(["status", "--store", store, "--max-age", "1d", "--json"], clock: clock)
    #expect(run.exitCode == .expired)
    let expected: String = [
      #"{"status":"expired","reasons":["too_old"],"now":"2023-11-16T22:13:20.000000000Z","#,
      #""now_ns":1700172800000000000,"mark":"2023-11-16T22:13:20.000000000Z","#,
      #""mark_ns":1700172800000000000,"deadline":null,"deadline_ns":null,"generation":1,"#,
      #""item_count":1,"oldest":"2023-11-14T22:13:20.000000000Z","#,
      #""oldest_ns":1700000000000000000,"newest":"2023-11-14T22:13:20.000000000Z","#,
      #""newest_ns":1700000000000000000,"max_age":"1d","max_age_ns":86400000000000,"#,
      #""mark_error":null,"item_error":null,"boot_floor":"on","#,
      #""floor":"2023-11-14T22:13:20.000000000Z","floor_ns":1700000000000000000,"#,
      #""boot_id":"00000000-0000-4000-8000-000000000001","floor_untrusted":false,"#,
      #""tolerance":"2s","tolerance_ns":2000000000,"#,
      #""effective_now":"2023-11-16T22:13:20.000000000Z","effective_now_ns":1700172800000000000,"#,
      #""effective_clock":"wall","store":"\#(store)","#,
      #""protections":{"mark_rule":"active","boot_clock_floor":"active","#,
      #""server_anchor":"none","tpm_clock":"not_configured"}}"#, "\n",
    ].joined()
    #expect(run.standardOutput == expected)
  }

  @Test func rollbackIsExpiredTwiceAndTheMarkHolds() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    clock.advance(by: .seconds(2 * 86_400))
    _ = runCommand(["status", "--store", store, "--max-age", "30d"], clock: clock)
    clock.set(storeCommandStart.advanced(by: .seconds(86_400))!)
    for _ in 0..<2 {
      let run = runCommand(["status", "--store", store, "--max-age", "30d"], clock: clock)
      #expect(run.exitCode == .expired)
      #expect(run.standardOutput.contains("reasons: clock_behind_mark\n"))
      #expect(run.standardOutput.contains("mark: 2023-11-16T22:13:20.000000000Z\n"))
    }
  }

  @Test func emptyStoreIsUnavailableAndExits2() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let run = runCommand(
      ["status", "--store", directory.path, "--max-age", "7d"],
      clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .unavailable)
    #expect(run.standardOutput.hasPrefix("status: unavailable\nreasons: none\n"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
  }

  @Test func failuresInsideTheStoreExit1WithTheTypedError() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    try Data(count: 8192).write(to: URL(fileURLWithPath: store + "/clock-mark"))
    let run = runCommand(["status", "--store", store, "--max-age", "7d"], clock: clock)
    #expect(run.exitCode == .expired)
    #expect(run.standardOutput.contains("reasons: mark_unreadable\n"))
    #expect(run.standardOutput.contains("mark_error: unreadable"))
  }

  @Test func missingDirectoryExits74WithTheReason() {
    let run = runCommand(
      ["status", "--store", "/nonexistent/offline-ttl", "--max-age", "7d"],
      clock: UnimplementedWallClock())
    #expect(run.exitCode == .ioError)
    #expect(
      run.standardError == "error: store directory '/nonexistent/offline-ttl' does not exist\n")
  }

  @Test(arguments: [["--max-age", "7"], ["--max-age", "-1d"], []])
  func badMaxAgeIsAUsageError(_ maxAge: [String]) {
    let run = runCommand(["status", "--store", "/tmp"] + maxAge, clock: UnimplementedWallClock())
    #expect(run.exitCode == .usage)
    #expect(run.standardError.hasPrefix("error: "))
  }

  @Test func helpGoesToStandardOutput() {
    let run = runCommand(["status", "--help"], clock: UnimplementedWallClock())
    #expect(run.exitCode == .success)
    #expect(run.standardOutput.contains("status --store <dir> --max-age <duration> [--json]"))
  }
}
