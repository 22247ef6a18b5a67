import Foundation
import OfflineTTLTesting
import Testing

/// The first sealed sign-in killed (`SIGKILL`, by `strace`'s fault injection) at one system call
/// after another: nothing was committed before the clock-mark record exists, so `status` says
/// `unavailable` (no cache), never `expired`, or, killed while it made the key (before it
/// touched the store), finds no store directory at all; the key's directory never keeps a
/// temporary file or a second name of the key; and the next sign-in succeeds and leaves it
/// clean.
@Suite(.enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"))
struct InterruptedSealedSignInTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// Kill points: the `n`th call of a kind the first sealed sign-in makes while it creates the
  /// key (open of a file with no name, write, `fsync`, `linkat`), stages its items (`mkdir`,
  /// `syncfs`) and writes the first mark record (`pwrite64`, `renameat`), and after.
  static let killPoints: [(call: String, number: Int)] = [
    ("flock", 1), ("flock", 2), ("flock", 3), ("mkdirat", 3), ("mkdirat", 4), ("mkdirat", 5),
    ("linkat", 1), ("fsync", 1), ("fsync", 2), ("fsync", 3), ("fsync", 4), ("unlinkat", 1),
    ("unlinkat", 2), ("syncfs", 1), ("pwrite64", 1), ("renameat", 1), ("renameat", 2),
  ]

  @Test(arguments: killPoints.indices)
  func aKilledFirstSealedSignInReadsAsNoCacheAndLeavesNoKeyCopy(_ index: Int) throws {
    let (call, number) = Self.killPoints[index]
    let strace = try #require(toolPath("strace"))
    let root = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-killed-sign-in")
    defer { root.remove() }
    let store = root.path + "/store"
    let keys = root.path + "/keys"
    let key = keys + "/store.key"
    try FileManager.default.createDirectory(
      atPath: keys, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    let payload = root.path + "/payload"
    try Data("secret".utf8).write(to: URL(fileURLWithPath: payload))
    let signIn = [
      "sign-in", "--store", store, "--seal", "file:\(key)", "--put", "token=\(payload)",
    ]
    let killed = try binary.run(
      signIn,
      launcher: killedAt(strace: strace, call, occurrence: number), timeout: .seconds(20))
    let status = try binary.run(
      ["status", "--store", store, "--seal", "file:\(key)", "--max-age", "1d", "--json"])
    let state = String(
      status.standardOutput.split(separator: ",").first { $0.contains("\"status\"") } ?? "")
    // Killed before the commit point: no cache (or, killed while making the key, no store
    // directory yet). After it (or not killed at all): fresh.
    let storeMade = FileManager.default.fileExists(atPath: store)
    if killed.exitCode == 0 {
      #expect(state.contains("fresh"), "\(call) #\(number): \(status.standardOutput)")
    } else if storeMade {
      #expect(
        state.contains("unavailable") || state.contains("fresh"),
        "\(call) #\(number): \(status.standardOutput)\(status.standardError)")
    } else {
      #expect(
        status.exitCode == 74 && status.standardError.contains("does not exist"),
        "\(call) #\(number): \(status.standardOutput)\(status.standardError)")
    }
    func keyDirectory() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: keys).sorted()
    }
    let left = try keyDirectory()
    #expect(left.isEmpty || left == ["store.key"], "\(call) #\(number): \(left)")
    if left == ["store.key"] {
      let links = try FileManager.default.attributesOfItem(atPath: key)[.referenceCount] as? Int
      #expect(links == 1, "\(call) #\(number): the key has \(links ?? -1) names")
    }
    // The next sign-in succeeds, and leaves only the key.
    let again = try binary.run(signIn)
    #expect(again.exitCode == 0, "\(call) #\(number): \(again.standardError)")
    let after = try binary.run(
      ["status", "--store", store, "--seal", "file:\(key)", "--max-age", "1d"])
    #expect(after.standardOutput.hasPrefix("status: fresh"), "\(after.standardOutput)")
    #expect(try keyDirectory() == ["store.key"])
  }
}
