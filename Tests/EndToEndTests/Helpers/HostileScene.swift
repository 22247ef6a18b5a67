import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A scratch root for the hostile matrix: `store/` signed in with two items (`token`, `other`),
/// `outside/` (a directory and a file that links in the store point at, which must never
/// change), and the input files for `--put`. A sealed scene keeps its key in `seal.key`, beside
/// the store, and passes `--seal file:<key>` to every command.
struct Scene {
  static let tokenPayload = "token-payload"
  static let newPayload = "new-token-payload"

  let binary: BinaryRunner
  let root: String
  var store: String { root + "/store" }
  var outside: String { root + "/outside" }
  var newInput: String { root + "/new-input" }
  /// `--seal file:<root>/seal.key` for a sealed scene, else nothing.
  let seal: [String]
  /// The mark's generation after the first sign-in.
  private let firstGeneration: UInt64

  /// Creates the scene and signs in once with both items.
  ///
  /// - Parameters:
  ///   - binary: The binary under test.
  ///   - sealed: Whether the store is sealed with a key file kept beside it.
  init(binary: BinaryRunner, sealed: Bool = false) throws {
    self.binary = binary
    root =
      FileManager.default.temporaryDirectory.path + "/offline-ttl-e2e-matrix-"
      + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(
      atPath: root + "/outside/dir", withIntermediateDirectories: true)
    try Data("outside".utf8).write(to: URL(fileURLWithPath: root + "/outside/file"))
    try Data(Self.tokenPayload.utf8).write(to: URL(fileURLWithPath: root + "/token-input"))
    try Data("other".utf8).write(to: URL(fileURLWithPath: root + "/other-input"))
    try Data(Self.newPayload.utf8).write(to: URL(fileURLWithPath: root + "/new-input"))
    seal = sealed ? ["--seal", "file:" + root + "/seal.key"] : []
    let signIn = try binary.run(
      [
        "sign-in", "--store", root + "/store", "--json", "--put", "token=\(root)/token-input",
        "--put", "other=\(root)/other-input",
      ] + seal)
    try #require(signIn.exitCode == 0, "\(signIn.standardError)")
    firstGeneration = UInt64(try signIn.jsonInt64("generation"))
  }

  func remove() {
    // Undo what `rm -r` cannot pass: modes and owners are root's to change back.
    _ = try? binary.runTool("/bin/chmod", ["-R", "u+rwx", root])
    try? FileManager.default.removeItem(atPath: root)
  }

  var status: [String] { ["status", "--store", store, "--max-age", "7d"] + seal }

  func read(_ key: String) -> [String] {
    ["read", "--store", store, "--max-age", "7d", key] + seal
  }

  func signIn(_ keys: [String]) -> [String] {
    ["sign-in", "--store", store, "--json"] + keys.flatMap { ["--put", "\($0)=\(newInput)"] }
      + seal
  }

  func path(_ relative: String) -> String {
    relative == "." ? store : store + "/" + relative
  }

  func url(_ relative: String) -> URL {
    URL(fileURLWithPath: path(relative))
  }

  /// Removes what is at `relative` and puts a file of `kind` there.
  func replace(_ relative: String, with kind: SpecialFile) throws {
    let target = path(relative)
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.createDirectory(
      atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    switch kind {
    case .fifo:
      try #require(mkfifo(target, 0o600) == 0)
    case .socket:
      try UnixSocket.place(at: target)
    case .device:
      // /dev/null's numbers (1, 3); needs CAP_MKNOD, which root has here. Otherwise a FIFO.
      if mknod(target, S_IFCHR | 0o600, dev_t((1 << 8) | 3)) != 0 {
        try #require(mkfifo(target, 0o600) == 0)
      }
    case .directory:
      try FileManager.default.createDirectory(
        atPath: target + "/inner", withIntermediateDirectories: true)
      try Data("x".utf8).write(to: URL(fileURLWithPath: target + "/inner/file"))
    case .symbolicLink:
      let destination =
        relative.hasPrefix("cache/items") || relative.hasPrefix("clock")
          || relative == "cache/index" || relative == "cache/lock" || relative == "cache/pending"
        ? outside + "/file" : outside + "/dir"
      try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: destination)
    case .emptyFile:
      try Data().write(to: URL(fileURLWithPath: target))
    }
  }

  /// Makes `relative` a sparse file of `size` bytes (creating it when missing).
  func truncate(_ relative: String, to size: UInt64) throws {
    if !FileManager.default.fileExists(atPath: path(relative)) {
      try Data().write(to: url(relative))
      _ = Glibc.chmod(path(relative), 0o600)
    }
    let handle = try #require(FileHandle(forWritingAtPath: path(relative)))
    try handle.truncate(atOffset: size)
    try handle.close()
  }

  func chown(_ relative: String, to user: uid_t) throws {
    try #require(Glibc.chown(path(relative), user, user) == 0, "chown \(relative): \(errno)")
  }

  func chmod(_ relative: String, _ mode: Int) throws {
    try #require(Glibc.chmod(path(relative), mode_t(mode)) == 0, "chmod \(relative)")
  }

  /// Rewrites the index header in place with `count` and `bodyLength` and valid checksums.
  func craftIndexHeader(count: UInt64, bodyLength: UInt64) throws {
    var bytes = [UInt8](try Data(contentsOf: url("cache/index")))
    func put(_ value: UInt64, at offset: Int) {
      for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
    put(count, at: 8)
    put(bodyLength, at: 56)
    let crc = CacheFormat.crc(bytes[0..<68])
    for index in 0..<4 { bytes[68 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    try Data(bytes).write(to: url("cache/index"))
  }

  /// The mark record's generation now (of a sealed store: after the first sign-in, the only
  /// one a case is made after).
  func generation() throws -> UInt64 {
    seal.isEmpty ? try FileClockMarkStore(atPath: store).read().generation : firstGeneration
  }

  /// The key provider of a sealed scene (`nil` unsealed).
  var sealingProvider: (any SealingKeyProvider)? {
    seal.isEmpty ? nil : FileSealingKeyProvider(path: root + "/seal.key")
  }

  /// Makes `cache/next-<generation>/` a well-formed staging of the live set (its index a copy of
  /// `cache/index`, an empty `items/` and `deleted` list) and creates `cache/pending`: with the
  /// mark's generation, what a sign-in leaves between its commit point and the end of its roll
  /// forward, so the staging belongs to the sign-in the mark record names (unsealed: its id in
  /// `sign-in`; sealed: the index's header MAC covers the id) and the store does not list it as
  /// stale. Returns the staging's path relative to the store.
  @discardableResult
  func makeStaging(_ generation: UInt64) throws -> String {
    let name = "cache/next-\(generation)"
    try FileManager.default.createDirectory(
      atPath: path(name + "/items"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: path("cache/index"), toPath: path(name + "/index"))
    try Data().write(to: url(name + "/deleted"))
    let record = try? FileClockMarkStore(atPath: store, sealing: sealingProvider).read()
    if let record, record.generation == generation, let signIn = record.signInID {
      if let sealingProvider {
        // The live index is bound to this generation and store; its header MAC, taken again
        // over the id, makes it the staged index of the record's sign-in.
        var index = [UInt8](try Data(contentsOf: url(name + "/index")))
        let keys = SealKeys(try sealingProvider.loadKey())
        index.replaceSubrange(
          96..<128, with: Sodium.mac([Array(index[0..<96]), signIn.bytes], key: keys.index))
        try Data(index).write(to: url(name + "/index"))
      } else {
        try Data(signIn.bytes).write(to: url(name + "/sign-in"))
      }
    }
    if !FileManager.default.fileExists(atPath: path("cache/pending")) {
      try Data().write(to: url("cache/pending"))
    }
    if record?.generation == generation {
      // What the binary reads as the committed staging (a stale one is never read).
      let stale = try DirectoryCacheStore(atPath: store, sealing: sealingProvider).staleStagings()
      try #require(stale.isEmpty, "the scene's staging is not the committed one: \(stale)")
    }
    return name
  }

  /// Leaves the mark record `"missing"` (removed) or `"garbage"` (8 KiB of zeros).
  func breakRecord(_ how: String) throws {
    if how == "missing" {
      try FileManager.default.removeItem(atPath: path("clock-mark"))
    } else {
      try Data(repeating: 0, count: 8192).write(to: url("clock-mark"))
    }
  }

  /// Whether anything (a link included, not followed) stands at `relative`.
  func exists(_ relative: String) -> Bool {
    var info = stat()
    return lstat(path(relative), &info) == 0
  }

  /// The names of the sign-in stagings (`next-*`) in `cache/`.
  func stagings() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path("cache"))) ?? [])
      .filter { $0.hasPrefix("next-") }
  }

  /// Rewrites the mark record with `generation`, keeping its mark and floor.
  func craftGeneration(_ generation: UInt64) throws {
    let stored = try FileClockMarkStore(atPath: store).read()
    let crafted = ClockMarkRecord(generation: generation, mark: stored.mark, floor: stored.floor)
    try Data(MarkRecordCodec.encodeFile(crafted, sequence: 1)).write(to: url("clock-mark"))
  }

  /// Names, sizes and modification times of everything under the scratch root outside the
  /// store (links not followed).
  func outsideSnapshot() -> [String: String] {
    var entries = Self.snapshot(outside)
    let top = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    for name in top where name != "store" { entries["top/" + name] = "present" }
    return entries
  }

  /// Every path under `directory` with its type, size and modification time.
  static func snapshot(_ directory: String) -> [String: String] {
    var result: [String: String] = [:]
    let manager = FileManager.default
    guard let names = manager.subpaths(atPath: directory) else { return result }
    for name in names {
      let attributes = try? manager.attributesOfItem(atPath: directory + "/" + name)
      let type = attributes?[.type] as? FileAttributeType
      let size = attributes?[.size] as? UInt64
      let date = attributes?[.modificationDate] as? Date
      result[name] =
        "\(type?.rawValue ?? "?") \(size ?? 0) \(date?.timeIntervalSince1970 ?? 0)"
    }
    return result
  }
}

extension BinaryRunner {
  /// Runs a system tool (outside the matrix's checks).
  func runTool(_ path: String, _ arguments: [String]) throws -> BinaryResult {
    try BinaryRunner(path: path).run(arguments)
  }
}
