import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

@Suite struct DemoTests {
  @Test func tellsTheWholeStoryOneRowPerStep() {
    let run = runCommand(["demo"], clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .success)
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.count == 13)
    let rows = lines.dropFirst(2).map { $0.split(separator: " ", omittingEmptySubsequences: true) }
    let statuses = rows.map { row in
      row.first(where: { ["fresh", "expired", "intact"].contains($0) })
    }
    #expect(
      statuses == [
        "fresh", "fresh", "expired", "expired", "expired", "expired", "intact", "fresh",
        "expired", "fresh", "fresh",
      ])
    #expect(
      lines[5].hasSuffix(
        "clock_behind_mark" + String(repeating: " ", count: 45) + "t0+8d       t0+1h"))
    #expect(lines[6].contains("clock_behind_mark,item_from_future,clock_behind_elapsed_time"))
    #expect(lines[6].hasSuffix("t0+8d       t0+1h"), "the mark is not lowered by the 2nd rollback")
    #expect(
      lines[9].hasSuffix(
        "fresh       none" + String(repeating: " ", count: 58) + "t0+1d       t0+1d"))
    // The held clock: the floor (t0+3d) refuses what the mark rule alone calls fresh.
    #expect(lines[10].contains("t0+1d1s     expired     clock_behind_elapsed_time "))
    #expect(lines[10].hasSuffix("t0+1d1s     t0+3d"))
    #expect(lines[11].contains("mark rule only (--no-boot-floor)"))
    #expect(
      lines[11].hasSuffix(
        "fresh       none" + String(repeating: " ", count: 58) + "t0+1d1s     off"))
    #expect(lines[12].contains("t0+3d       fresh"))
    #expect(run.standardError == "")
  }

  @Test func jsonIsOneObjectPerStepWithInstantsTwice() {
    let run = runCommand(["demo", "--json"], clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .success)
    let lines = run.standardOutput.split(separator: "\n")
    #expect(lines.count == 11)
    let expected: String = [
      #"{"step":1,"action":"sign in online, write 2 items","#,
      #""clock":"2023-11-14T22:13:20.000000000Z","clock_ns":1700000000000000000,"#,
      #""status":"fresh","reasons":[],"mark":"2023-11-14T22:13:20.000000000Z","#,
      #""mark_ns":1700000000000000000,"deadline":"2023-11-21T22:13:20.000000000Z","#,
      #""deadline_ns":1700604800000000000,"generation":1,"item_count":2,"#,
      #""floor":"2023-11-14T22:13:20.000000000Z","floor_ns":1700000000000000000,"#,
      #""effective_clock":"wall"}"#,
    ].joined()
    #expect(lines.first.map(String.init) == expected)
  }

  /// `demo --seal` says the store is sealed and with which key: the header names the key file
  /// and whether the demo created it, each JSON row carries the same, and the items are said to
  /// be authenticated; an unsealed demo says none of it.
  @Test func aSealedDemoNamesItsKey() throws {
    let keys = try TemporaryStoreDirectory(prefix: "offline-ttl-demo-key")
    defer { keys.remove() }
    let key = keys.appending("demo.key")
    let first = runCommand(
      ["demo", "--seal", "file:\(key)"], clock: ManualWallClock(storeCommandStart))
    #expect(first.exitCode == .success, "\(first.standardError)")
    let header = first.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
    #expect(
      header.contains(", sealed with key file \(key) (created now), max age 7d,"), "\(header)")
    #expect(first.standardOutput.contains("2 items authenticated, bytes and written_at unchanged"))
    let again = runCommand(
      ["demo", "--seal", "file:\(key)", "--json"], clock: ManualWallClock(storeCommandStart))
    #expect(again.exitCode == .success, "\(again.standardError)")
    let rows = again.standardOutput.split(separator: "\n")
    #expect(rows.count == 11)
    for row in rows {
      #expect(row.hasSuffix(#","sealed_with":"key file \#(key)","key_created":false}"#), "\(row)")
    }
    let second = runCommand(
      ["demo", "--seal", "file:\(key)"], clock: ManualWallClock(storeCommandStart))
    #expect(second.standardOutput.contains(", sealed with key file \(key) (existing), max age"))
    let plain = runCommand(["demo", "--json"], clock: ManualWallClock(storeCommandStart))
    #expect(!plain.standardOutput.contains("sealed_with"))
    #expect(
      !runCommand(["demo"], clock: ManualWallClock(storeCommandStart)).standardOutput.contains(
        "sealed"))
  }

  @Test func withTheFloorOffTheHeldClockIsNotCaught() {
    let run = runCommand(["demo", "--no-boot-floor"], clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .success)
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines[6].contains("expired     clock_behind_mark,item_from_future "))
    #expect(lines[10].contains("t0+1d1s     fresh       none "))
    #expect(lines[10].hasSuffix(" off"))
  }

  @Test func aToleranceAboveTheHoldLetsTheHeldClockPass() {
    let run = runCommand(
      ["demo", "--clock-tolerance", "3d"], clock: ManualWallClock(storeCommandStart))
    #expect(run.exitCode == .success)
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines[10].contains("t0+1d1s     fresh       none "))
    #expect(lines[10].hasSuffix("t0+3d"))
  }

  @Test func removesItsTemporaryStoreUnlessKept() throws {
    func storePath(_ output: String) throws -> String {
      let header = try #require(output.split(separator: "\n").first)
      let start = try #require(header.range(of: "a fresh store in "))
      let end = try #require(header.range(of: ", max age"))
      return String(header[start.upperBound..<end.lowerBound])
    }
    let run = runCommand(["demo"], clock: ManualWallClock(storeCommandStart))
    #expect(!FileManager.default.fileExists(atPath: try storePath(run.standardOutput)))
    let kept = runCommand(["demo", "--keep"], clock: ManualWallClock(storeCommandStart))
    let path = try storePath(kept.standardOutput)
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(kept.standardOutput.hasSuffix("store kept: \(path)\n"))
    #expect(FileManager.default.fileExists(atPath: path + "/clock-mark"))
  }
}
