import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

/// `--clock-tolerance`, `--no-boot-floor` and the floor's output in `status` and `read`, with
/// manual wall and boot clocks.
@Suite struct StoreCommandFloorTests {
  /// A store signed in at `storeCommandStart` on `boot`, then the wall clock held one second
  /// later while the boot clock lets two days pass.
  func heldClockStore() throws -> (TemporaryStoreDirectory, ManualWallClock, ManualBootClock) {
    let clock = ManualWallClock(storeCommandStart)
    let boot = stillBootClock()
    let directory = try TemporaryStoreDirectory(prefix: "cli-floor")
    let input = directory.appending("token")
    try Data("t".utf8).write(to: URL(fileURLWithPath: input))
    let signIn = runCommand(
      ["sign-in", "--store", directory.appending("store"), "--put", "token=\(input)"],
      clock: clock, bootClock: boot)
    #expect(signIn.exitCode == .success)
    clock.advance(by: .seconds(1))
    boot.advance(by: .seconds(2 * 86_400))
    return (directory, clock, boot)
  }

  @Test func statusJSONShowsTheFloorThatRefusesAHeldClock() throws {
    let (directory, clock, boot) = try heldClockStore()
    defer { directory.remove() }
    let run = runCommand(
      ["status", "--store", directory.appending("store"), "--max-age", "7d", "--json"],
      clock: clock, bootClock: boot)
    #expect(run.exitCode == .expired)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
    #expect(object["reasons"] as? [String] == ["clock_behind_elapsed_time"])
    #expect((object["floor_ns"] as? NSNumber)?.int64Value == 1_700_172_800_000_000_000)
    #expect(object["floor"] as? String == "2023-11-16T22:13:20.000000000Z")
    #expect(object["boot_id"] as? String == "00000000-0000-4000-8000-000000000001")
    // 2 s + 500 ppm of 2 days (86.4 s).
    #expect((object["tolerance_ns"] as? NSNumber)?.int64Value == 88_400_000_000)
    #expect(object["effective_clock"] as? String == "floor")
    #expect((object["effective_now_ns"] as? NSNumber)?.int64Value == 1_700_172_800_000_000_000)
    #expect(object["boot_floor"] as? String == "on")
  }

  @Test func statusWithoutTheFloorIsTheMarkRuleAlone() throws {
    let (directory, clock, boot) = try heldClockStore()
    defer { directory.remove() }
    let run = runCommand(
      [
        "status", "--store", directory.appending("store"), "--max-age", "7d", "--json",
        "--no-boot-floor",
      ], clock: clock, bootClock: boot)
    #expect(run.exitCode == .fresh)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
    #expect(object["reasons"] as? [String] == [])
    #expect(object["boot_floor"] as? String == "off")
    #expect(object["tolerance_ns"] is NSNull)
    #expect(object["effective_clock"] as? String == "wall")
    // The floor is still carried forward in the record.
    #expect((object["floor_ns"] as? NSNumber)?.int64Value == 1_700_172_800_000_000_000)
  }

  @Test func aToleranceAboveTheHoldLetsItPassInText() throws {
    let (directory, clock, boot) = try heldClockStore()
    defer { directory.remove() }
    let run = runCommand(
      [
        "status", "--store", directory.appending("store"), "--max-age", "7d",
        "--clock-tolerance", "2d",
      ], clock: clock, bootClock: boot)
    #expect(run.exitCode == .fresh)
    #expect(run.standardOutput.contains("\ntolerance: 2d1m26s400ms\n"))
    #expect(
      run.standardOutput.contains(
        "\neffective_now: 2023-11-16T22:13:20.000000000Z (from the boot-clock floor)\n"))
  }

  @Test func readIsRefusedWithTheValuesOnStandardError() throws {
    let (directory, clock, boot) = try heldClockStore()
    defer { directory.remove() }
    let run = runCommand(
      ["read", "--store", directory.appending("store"), "--max-age", "7d", "token"],
      clock: clock, bootClock: boot)
    #expect(run.exitCode == .expired)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError
        == "error: refused: expired: clock_behind_elapsed_time; the wall clock"
        + " (2023-11-14T22:13:21.000000000Z) is 1d23h59m59s behind the boot-clock floor"
        + " (2023-11-16T22:13:20.000000000Z), more than the tolerance 1m28s400ms\n")
  }

  @Test(arguments: ["", "5", "-1s", "soon"])
  func badToleranceIsAUsageError(_ value: String) throws {
    let run = runCommand(
      ["status", "--store", "/tmp", "--max-age", "7d", "--clock-tolerance", value],
      clock: UnimplementedWallClock())
    #expect(run.exitCode == .usage)
    #expect(run.standardError.hasPrefix("error: --clock-tolerance"))
  }
}
