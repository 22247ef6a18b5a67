import Foundation
import OfflineTTLTesting
import Testing

/// The boot-clock floor on the built binary (issue 5): the wall clock frozen by libfaketime one
/// whole second after the sign-in (so never behind the mark), the boot clock left real
/// (`FAKETIME_DONT_FAKE_MONOTONIC=1`) while a few real seconds pass.
@Suite struct BootClockFloorEndToEndTests {
  /// Runs `offline-ttl arguments` with `environment` added, killed after ``BinaryRunner/hangBound``.
  func run(_ arguments: [String], environment: [String: String] = [:]) throws -> BinaryResult {
    try BinaryRunner().run(arguments, environment: environment)
  }

  @Test(.enabled(if: FakeTime.library != nil, FakeTime.missing))
  func aFrozenWallClockIsCaughtByTheFloorAndMissedWithoutIt() throws {
    let library = try #require(FakeTime.library)
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-floor")
    defer { scratch.remove() }
    let store = scratch.path + "/store"
    let input = scratch.path + "/token.txt"
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))

    // Sign in under the real clock; the mark is the sign-in instant.
    let signIn = try run(["sign-in", "--store", store, "--put", "token=\(input)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    let show = try run(["mark", "show", "--dir", store, "--unit", "ns"])
    let words = show.standardOutput.split(separator: " ")
    let signedInAt = try #require(words.count >= 2 ? Int64(words[1]) : nil, "\(show)")

    // The frozen wall clock: the first whole second at least 1 s after the sign-in.
    let second: Int64 = 1_000_000_000
    let frozen = (signedInAt + second + second - 1) / second
    // Wait until real time is 2 s past the frozen instant: the boot clock then proves at least
    // 2 s more than the frozen wall clock admits (a wait of 3 to 4 s from the sign-in).
    while Int64(Date().timeIntervalSince1970 * 1e9) < (frozen + 2) * second {
      Thread.sleep(forTimeInterval: 0.05)
    }
    let environment = FakeTime.frozenWallClock(
      atSecondsSinceEpoch: frozen, library: library)
    let status = ["status", "--store", store, "--max-age", "1d", "--json"]

    // Floor on, tolerance 500 ms (below the wait): refused with the new reason.
    let caught = try run(
      status + ["--clock-tolerance", "500ms"], environment: environment)
    #expect(caught.exitCode == 1, "\(caught.standardOutput) \(caught.standardError)")
    let refused = try caught.jsonObject()
    #expect(refused["reasons"] as? [String] == ["clock_behind_elapsed_time"])
    #expect(try caught.jsonInt64("now_ns") == frozen * second, "libfaketime froze the wall clock")
    #expect(
      try caught.jsonInt64("mark_ns") == frozen * second, "the wall clock is ahead of the mark")
    #expect(try caught.jsonInt64("floor_ns") >= (frozen + 2) * second)
    #expect(refused["effective_clock"] as? String == "floor")
    let tolerance = try caught.jsonInt64("tolerance_ns")
    // 500 ms + 500 ppm of the seconds since the sign-in (0.5 ms a second; under 100 s).
    #expect(tolerance > 500_000_000 && tolerance < 550_000_000, "\(tolerance)")
    let bootID = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
    #expect(refused["boot_id"] as? String == bootID.trimmingCharacters(in: .whitespacesAndNewlines))

    // The same moment with the floor off: the mark rule alone says fresh.
    let missed = try run(status + ["--no-boot-floor"], environment: environment)
    #expect(missed.exitCode == 0, "\(missed.standardOutput) \(missed.standardError)")
    let fresh = try missed.jsonObject()
    #expect(fresh["status"] as? String == "fresh")
    #expect(fresh["reasons"] as? [String] == [])
    #expect(fresh["boot_floor"] as? String == "off")
  }
}
