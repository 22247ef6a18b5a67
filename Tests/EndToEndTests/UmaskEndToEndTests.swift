import Foundation
import OfflineTTLTesting
import Testing

/// The tool's files are private whatever the caller's umask: a sign-in run under `umask 777`
/// (which removes even the owner's bits) makes directories of mode 0700 and files of mode 0600,
/// and later commands with a usual umask use the store. Before, the store directory (or
/// `cache/`) was created with mode 0000 and every later sign-in failed (outside test 3, N3).
@Suite struct UmaskEndToEndTests {
  /// Runs the binary under `sh -c 'umask <mask>; exec …'`.
  static func launcher(umask mask: String) -> [String] {
    ["sh", "-c", "umask \(mask); exec \"$@\"", "sh"]
  }

  static func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require(attributes[.posixPermissions] as? Int)
  }

  @Test(arguments: ["777", "022", "000"])
  func aSignInUnderAnyUmaskMakesAPrivateStoreThatLaterCommandsUse(mask: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-umask")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret".utf8).write(to: URL(fileURLWithPath: token))
    let runner = try BinaryRunner()
    let signIn = try runner.run(
      ["sign-in", "--store", store, "--put", "token=\(token)"],
      launcher: Self.launcher(umask: mask))
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    for directory in [store, store + "/cache", store + "/cache/items"] {
      #expect(try Self.mode(directory) == 0o700, "\(directory)")
    }
    for file in [store + "/clock-mark", store + "/cache/index", store + "/cache/items/token"] {
      #expect(try Self.mode(file) == 0o600, "\(file)")
    }
    let status = try runner.run(["status", "--store", store, "--max-age", "7d"])
    #expect(status.exitCode == 0, "\(status.standardError)")
    let again = try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(again.exitCode == 0, "\(again.standardError)")
    let read = try runner.run(["read", "--store", store, "--max-age", "7d", "token"])
    #expect(read.standardOutput == "secret", "\(read.standardError)")
  }
}
