import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// The staging replay on the built `offline-ttl` (unsealed, and sealed with a key file): a
/// sign-in killed by `strace` at its mark reset's first `pwrite64` (after its staging and
/// `pending` were made durable, before its commit point) leaves `cache/next-2`; a copy of it and
/// of `pending` is put back after a later sign-in committed generation 2. `read`, `status` and
/// the next `sign-in` serve the committed sign-in's item, never the killed one's.
@Suite(.enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"))
struct StagingReplayEndToEndTests {
  @Test(arguments: [false, true])
  func aPutBackStagingOfAKilledSignInIsNeverServed(sealed: Bool) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "staging-replay-e2e")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let seal = sealed ? ["--seal", "file:\(scratch.appending("key"))"] : []
    for tag in ["A", "B", "C"] {
      try Data(tag.utf8).write(to: URL(fileURLWithPath: scratch.appending(tag)))
    }
    let runner = try BinaryRunner()
    func signIn(_ tag: String?, launcher: [String] = []) throws -> BinaryResult {
      try runner.run(
        ["sign-in", "--store", store] + seal
          + (tag.map { ["--put", "token=\(scratch.appending($0))"] } ?? []),
        launcher: launcher, timeout: .seconds(60))
    }
    func read() throws -> BinaryResult {
      try runner.run(["read", "--store", store] + seal + ["--max-age", "7d", "token"])
    }
    let first = try signIn("A")
    try #require(first.exitCode == 0, "\(first.standardError)")
    let killed = try signIn(
      "B",
      launcher: killedAt("pwrite64", occurrence: 1))
    try #require(killed.exitCode == nil, "the sign-in was not killed: \(killed.standardError)")
    let cache = store + "/cache"
    try #require(FileManager.default.fileExists(atPath: cache + "/next-2/index"))
    try #require(FileManager.default.fileExists(atPath: cache + "/pending"))
    let saved = try StagingCopy(cache, names: ["next-2", "pending"])
    let committed = try signIn("C")
    try #require(committed.exitCode == 0, "\(committed.standardError)")
    #expect(try read().standardOutput == "C")
    #expect(!FileManager.default.fileExists(atPath: cache + "/next-2"))
    try saved.putBack(into: cache)
    let replayed = try read()
    #expect(replayed.exitCode == 0, "\(replayed.standardError)")
    #expect(replayed.standardOutput == "C", "the killed sign-in's item was served")
    let status = try runner.run(["status", "--store", store] + seal + ["--max-age", "7d"])
    #expect(status.exitCode == 0, "\(status.standardOutput)\(status.standardError)")
    #expect(FileManager.default.fileExists(atPath: cache + "/next-2"), "a reader removed it")
    let plain = try signIn(nil)
    #expect(plain.exitCode == 0, "\(plain.standardError)")
    #expect(try read().standardOutput == "C", "the next sign-in rolled the copy forward")
    #expect(!FileManager.default.fileExists(atPath: cache + "/next-2"))
    #expect(!FileManager.default.fileExists(atPath: cache + "/pending"))
  }
}

/// Files and directories copied out of a store directory with their bytes, put back later with
/// the modes the store writes (0700 directories, 0600 files).
struct StagingCopy {
  var entries: [(path: String, data: Data?)] = []

  init(_ directory: String, names: [String]) throws {
    let manager = FileManager.default
    for name in names {
      var isDirectory: ObjCBool = false
      guard manager.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) else {
        throw BinaryRunnerError("nothing to copy at \(directory)/\(name)")
      }
      guard isDirectory.boolValue else {
        entries.append((name, try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))))
        continue
      }
      entries.append((name, nil))
      for sub in try manager.subpathsOfDirectory(atPath: directory + "/" + name).sorted() {
        let path = name + "/" + sub
        var subIsDirectory: ObjCBool = false
        _ = manager.fileExists(atPath: directory + "/" + path, isDirectory: &subIsDirectory)
        entries.append(
          (
            path,
            subIsDirectory.boolValue
              ? nil : try Data(contentsOf: URL(fileURLWithPath: directory + "/" + path))
          ))
      }
    }
  }

  func putBack(into directory: String) throws {
    for (path, data) in entries {
      let target = directory + "/" + path
      if let data {
        try data.write(to: URL(fileURLWithPath: target))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
      } else {
        try FileManager.default.createDirectory(
          atPath: target, withIntermediateDirectories: false,
          attributes: [.posixPermissions: 0o700])
      }
    }
  }
}
