import Foundation
import OfflineTTLTesting
import Testing

/// The section 4 on the built binary: only the child's wall clock is moved (libfaketime,
/// frozen at whole seconds, `FAKETIME_DONT_FAKE_MONOTONIC=1` so the boot clock stays real).
@Suite struct FakeTimeGateTests {
  static let day: Int64 = 86_400

  /// Runs `offline-ttl` with its wall clock frozen at `seconds` (or the real clock for `nil`),
  /// killed after ``BinaryRunner/hangBound``.
  static func run(_ arguments: [String], at seconds: Int64?, library: String) throws
    -> BinaryResult
  {
    let environment =
      seconds.map { FakeTime.frozenWallClock(atSecondsSinceEpoch: $0, library: library) } ?? [:]
    return try BinaryRunner().run(arguments, environment: environment)
  }

  /// The `reasons` of a `status --json` line.
  static func reasons(_ output: BinaryResult) throws -> [String] {
    try #require(try output.jsonObject()["reasons"] as? [String])
  }

  @Test(.enabled(if: FakeTime.library != nil, FakeTime.missing))
  func aMovedWallClockExpiresRollbacksAreRefusedAndSignInRecovers() throws {
    let library = try #require(FakeTime.library)
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-gate")
    defer { scratch.remove() }
    let store = scratch.path + "/store"
    let input = scratch.path + "/token.txt"
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
    let now = Int64(Date().timeIntervalSince1970)

    // Sign in under the real clock.
    let signIn = try Self.run(
      ["sign-in", "--store", store, "--put", "token=\(input)"], at: nil, library: library)
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    let itemPath = store + "/cache/items/token"
    let itemBefore = try Data(contentsOf: URL(fileURLWithPath: itemPath))

    // Two days ahead with a one-day max age: too old.
    let ahead = try Self.run(
      ["status", "--store", store, "--max-age", "1d", "--json"], at: now + 2 * Self.day,
      library: library)
    #expect(ahead.exitCode == 1)
    #expect(try Self.reasons(ahead) == ["too_old"])
    let high = (now + 2 * Self.day) * 1_000_000_000
    #expect(try ahead.jsonInt64("mark_ns") == high)

    // One day ahead: after the write, but behind the mark. A long max age: the mark alone
    // refuses, twice.
    for _ in 0..<2 {
      let behind = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"], at: now + Self.day,
        library: library)
      #expect(behind.exitCode == 1)
      #expect(try Self.reasons(behind) == ["clock_behind_mark"])
      #expect(try behind.jsonInt64("mark_ns") == high)
    }

    // Rolled back to before the write, twice.
    for _ in 0..<2 {
      let before = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"], at: now - Self.day,
        library: library)
      #expect(before.exitCode == 1)
      let reasons = try Self.reasons(before)
      #expect(reasons.contains("clock_behind_mark"))
      #expect(reasons.contains("item_from_future"))
      #expect(try before.jsonInt64("mark_ns") == high)
    }

    // The mark still holds the two-days-ahead time (read without writing).
    let show = try Self.run(
      ["mark", "show", "--dir", store, "--unit", "ns"], at: nil, library: library)
    #expect(show.standardOutput == "mark \(high) generation 1\n")

    // Reading offline is refused under the real clock (behind the mark); the item is unchanged.
    let read = try Self.run(
      ["read", "--store", store, "--max-age", "30d", "token"], at: nil, library: library)
    #expect(read.exitCode == 1)
    #expect(read.standardOutput == "")
    #expect(read.standardError.hasPrefix("error: refused: expired: clock_behind_mark"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: itemPath)) == itemBefore)

    // An online sign-in under the real clock makes it fresh again.
    let again = try Self.run(
      ["sign-in", "--store", store, "--put", "token=\(input)"], at: nil, library: library)
    #expect(again.exitCode == 0)
    let fresh = try Self.run(
      ["status", "--store", store, "--max-age", "1d", "--json"], at: nil, library: library)
    #expect(fresh.exitCode == 0, "\(fresh.standardOutput)")
    #expect(try Self.reasons(fresh).isEmpty)
    let readAgain = try Self.run(
      ["read", "--store", store, "--max-age", "1d", "token"], at: nil, library: library)
    #expect(readAgain.exitCode == 0)
    #expect(readAgain.standardOutput == "secret-token")
  }

  @Test(.enabled(if: FakeTime.library != nil, FakeTime.missing))
  func anAppAndAnExtensionOnDifferentClocksNeverLowerTheMark() throws {
    let library = try #require(FakeTime.library)
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-gate")
    defer { scratch.remove() }
    let store = scratch.path + "/store"
    let input = scratch.path + "/item"
    try Data("shared".utf8).write(to: URL(fileURLWithPath: input))
    let now = Int64(Date().timeIntervalSince1970)
    #expect(
      try Self.run(["sign-in", "--store", store, "--put", "k=\(input)"], at: nil, library: library)
        .exitCode == 0)
    // Alternating observations: the app's clock runs ahead of the extension's, and both move.
    var highest: Int64 = 0
    for round in Int64(0)..<3 {
      for (clock, name) in [(now + 3600 * (round + 2), "app"), (now + 3600 * round, "extension")] {
        let output = try Self.run(
          ["status", "--store", store, "--max-age", "7d", "--json"], at: clock, library: library)
        let mark = try output.jsonInt64("mark_ns")
        #expect(mark >= highest, "\(name) lowered the mark in round \(round)")
        #expect(mark >= clock * 1_000_000_000)
        highest = max(highest, mark)
      }
    }
    #expect(highest == (now + 3600 * 4) * 1_000_000_000)
    // At the same time: each process on its own clock, started together.
    let clocks = (0..<6).map { now + 3600 * Int64(10 - $0) }
    runConcurrently(clocks.count) { index in
      _ = try? Self.run(
        ["status", "--store", store, "--max-age", "7d"], at: clocks[index], library: library)
    }
    let show = try Self.run(
      ["mark", "show", "--dir", store, "--unit", "s"], at: nil, library: library)
    #expect(show.standardOutput == "mark \(now + 36_000) generation 1\n")
  }
}
