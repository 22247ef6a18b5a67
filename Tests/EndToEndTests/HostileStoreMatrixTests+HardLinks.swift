import Foundation
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Store files with a second name, on the built binary: a file outside the store hard-linked in
/// at each position (a copy of the store's own bytes, so a record or index that would otherwise
/// be used), and each store file given a name outside the store.
extension HostileStoreMatrixTests {
  /// One position of a store file, how to make it exist, and what the offline commands may
  /// answer while it has a second name.
  struct HardLinkCase: CustomTestStringConvertible, Sendable {
    let position: String
    let direction: String
    /// Exit codes of `status` and `read token` before the sign-in.
    let statusBefore: Set<Int32>
    let readBefore: Set<Int32>
    /// Whether `mark show` and `mark observe` open the file (then they are refused with 74).
    let markRefused: Bool
    /// Whether the sign-in must give the store's name a file of its own (or remove it).
    let signInReplaces: Bool
    var testDescription: String { "\(position) linked \(direction)" }

    /// Where the other name is, outside the store, and a copy of its bytes as they were made.
    static func outside(_ scene: Scene) -> String { scene.outside + "/linked" }
    static func expected(_ scene: Scene) -> String { scene.root + "/linked-bytes" }

    /// The case for ``HostileStoreMatrixTests/prepared(_:sealed:)``: makes the file, gives it
    /// its second name (a copy of its bytes outside the store linked in under the store's
    /// name, or the store's file linked out) and keeps a copy of the bytes to compare.
    var hostile: HostileCase {
      HostileCase(name: testDescription, statusBefore: statusBefore, readBefore: readBefore) {
        scene in
        let inside = scene.path(try prepare(scene))
        let outside = Self.outside(scene)
        if direction == "in" {
          try FileManager.default.copyItem(atPath: inside, toPath: outside)
          try #require(unlink(inside) == 0)
          try #require(link(outside, inside) == 0, "link: \(errno)")
        } else {
          try #require(link(inside, outside) == 0, "link: \(errno)")
        }
        try FileManager.default.copyItem(atPath: outside, toPath: Self.expected(scene))
      }
    }

    /// Makes the file at `position` exist (a committed staging, leftover temporary files).
    func prepare(_ scene: Scene) throws -> String {
      let generation = try scene.generation()
      let position = self.position.replacingOccurrences(of: "<g>", with: "\(generation)")
      let files = FileManager.default
      if position.hasPrefix("cache/next-") || position == "cache/pending" {
        try scene.makeStaging(generation)
      }
      if position.hasSuffix("/items/token") && position.hasPrefix("cache/next-") {
        try files.copyItem(atPath: scene.path("cache/items/token"), toPath: scene.path(position))
      }
      if position == "cache/tmp/w0" {
        try files.createDirectory(
          atPath: scene.path("cache/tmp"), withIntermediateDirectories: true)
      }
      if !files.fileExists(atPath: scene.path(position)) {
        try Data("leftover".utf8).write(to: scene.url(position))
      }
      try #require(chmod(scene.path(position), 0o600) == 0)
      return position
    }

    static let all: [HardLinkCase] = {
      let positions: [(String, status: Set<Int32>, read: Set<Int32>, mark: Bool, replaces: Bool)] =
        [
          ("clock-mark", [74], [74], true, true),
          ("clock-mark.lock", [74], [74], true, true),
          ("cache/lock", [0, 74], [0, 74], false, true),
          ("cache/index", [74], [74], false, true),
          // Linked in, the items directory changed and `status` reads the headers; linked out,
          // `status` reads the index header only and the item is refused when read.
          ("cache/items/token", [0, 74], [74], false, true),
          ("cache/pending", [0], [0], false, true),
          ("cache/next-<g>/index", [74], [74], false, true),
          ("cache/next-<g>/deleted", [0], [0], false, true),
          ("cache/next-<g>/items/token", [0], [74], false, true),
          ("cache/tmp/w0", [0], [0], false, true),
          // Never opened: a reset that writes a new record removes it first.
          ("clock-mark.tmp", [0], [0], false, false),
        ]
      return positions.flatMap { entry in
        ["in", "out"].map {
          HardLinkCase(
            position: entry.0, direction: $0, statusBefore: entry.status, readBefore: entry.read,
            markRefused: entry.mark, signInReplaces: entry.replaces)
        }
      }
    }()
  }

  static func linkCount(_ path: String) -> UInt64? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return UInt64(info.st_nlink)
  }

  @Test(arguments: HardLinkCase.all)
  func aHardLinkedStoreFileIsNeverWrittenThroughAndSignInReplacesIt(_ hostile: HardLinkCase)
    throws
  {
    let prepared = try self.prepared(hostile.hostile)
    let (scene, label) = (prepared.scene, prepared.label)
    defer { scene.remove() }
    // Only a staging's position names the generation (the record then has one name).
    let position =
      hostile.position.contains("<g>")
      ? hostile.position.replacingOccurrences(of: "<g>", with: String(try scene.generation()))
      : hostile.position
    let inside = scene.path(position)
    let outside = HardLinkCase.outside(scene)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: HardLinkCase.expected(scene)))
    func refusedNamingThePath(_ result: BinaryResult, _ command: String) {
      guard result.exitCode == 74 else { return }
      let text = result.standardOutput + result.standardError
      #expect(text.contains("insecure_store"), "\(label): \(command): \(text)")
      #expect(text.contains("has 2 names"), "\(label): \(command): \(text)")
    }
    refusedNamingThePath(prepared.status, "status")
    refusedNamingThePath(prepared.read, "read")
    let now = String(Int64(Date().timeIntervalSince1970) + 1)
    let marks: Set<Int32> = hostile.markRefused ? [74] : [0]
    refusedNamingThePath(
      try run(["mark", "show", "--store", scene.store], allowed: marks, label), "mark show")
    refusedNamingThePath(
      try run(["mark", "observe", "--store", scene.store, "--now", now], allowed: marks, label),
      "mark observe")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes,
      "\(label): an offline command wrote through the other name")
    if hostile.position.hasPrefix("cache/next-") || hostile.position == "cache/pending" {
      #expect(!scene.stagings().isEmpty, "\(label): an offline check removed the staging")
    }

    try run(scene.signIn([]), allowed: [0], label)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes,
      "\(label): the sign-in wrote through the other name")
    if hostile.signInReplaces {
      #expect(Self.linkCount(outside) == 1, "\(label): the store still shares the file")
      #expect([nil, 1].contains(Self.linkCount(inside)), "\(label)")
    }
    #expect(scene.stagings() == [], "\(label): a staging was left after the sign-in")
    // A linked item is removed (never trusted), so the set may be empty until --put.
    try run(scene.status, allowed: [0, 2], label + " after sign-in")
    try run(scene.signIn(["token"]), allowed: [0], label)
    try run(scene.status, allowed: [0], label + " after sign-in --put")
    let after = try run(scene.read("token"), allowed: [0], label + " after sign-in --put")
    #expect(after.standardOutput == Scene.newPayload, "\(label)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes,
      "\(label): the other name's bytes changed")
  }
}
