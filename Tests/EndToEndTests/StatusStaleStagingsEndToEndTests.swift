import Foundation
import OfflineTTLTesting
import Testing

/// `status` over a store holding hundreds of `cache/next-*` directories that a writer of the
/// store made: it names the first 3 and counts the rest, in the text and in the JSON.
@Suite struct StatusStaleStagingsEndToEndTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  @Test func statusNamesAFewStaleStagingsAndCountsTheRest() throws {
    let root = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-stale")
    defer { root.remove() }
    let store = root.path + "/store"
    let signIn = try binary.run(["sign-in", "--store", store])
    try #require(signIn.exitCode == 0, "\(signIn.standardError)")
    for index in 0..<500 {
      try FileManager.default.createDirectory(
        atPath: store + "/cache/next-\(1_000 + index)", withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    let text = try binary.run(["status", "--store", store, "--max-age", "7d"])
    let lines = text.standardOutput.split(separator: "\n").filter {
      $0.hasPrefix("stale_staging: ")
    }
    let named = (1_000...1_002).map { index -> String in
      let reason = "no committed sign-in's: never read; the next sign-in removes it"
      return "stale_staging: cache/next-\(index) (\(reason))"
    }
    let more = "stale_staging: 497 more (500 in all: never read; the next sign-in removes them)"
    let expected: [String] = named + [more]
    #expect(lines.map(String.init) == expected, "\(text.standardOutput)")
    let json = try binary.run(["status", "--store", store, "--max-age", "7d", "--json"])
    let object = try json.jsonObject()
    #expect(object["stale_stagings"] as? [String] == ["next-1000", "next-1001", "next-1002"])
    #expect(object["stale_staging_count"] as? Int == 500)
    // The next sign-in removes them all.
    #expect(try binary.run(["sign-in", "--store", store]).exitCode == 0)
    let after = try binary.run(["status", "--store", store, "--max-age", "7d", "--json"])
    #expect(try after.jsonObject()["stale_stagings"] == nil, "\(after.standardOutput)")
  }
}
