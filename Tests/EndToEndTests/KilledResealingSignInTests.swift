import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

/// A sign-in that seals the store with a key its record is not sealed with (a new key over a
/// store sealed with another, a key over an unsealed store, the same key over a record whose
/// seal was altered), killed (`SIGKILL`, by `strace`'s fault injection) at one system call after
/// another. Before its commit point (the mark reset) the old configuration reads the old set;
/// after it, the new key reads the new set, fresh, through the staging (a staging sealed for
/// another generation than the reset writes is one no reader finds: every read was
/// `seal_mismatch` or `index_unauthentic` until the next sign-in). Never anything else; and the
/// next sign-in with the new key succeeds and reads the new set.
@Suite(.enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"))
struct KilledResealingSignInTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// What the store held before the resealing sign-in.
  enum Before: String, CaseIterable, Sendable {
    /// Sealed with key A; the sign-in uses key B.
    case otherKey
    /// Not sealed; the sign-in uses key B.
    case unsealed
    /// Sealed with key B, one slot's seal altered (`mark_unauthentic`); the sign-in uses key B.
    case alteredSeal
  }

  /// Kill points on both sides of the commit point, among them every one where the outside
  /// tester found the store unreadable with either key (`renameat` #2-3, `fsync` #4-6,
  /// `unlinkat` #1, `write` #4, `fchmod` #7, `flock` #5).
  static let killPoints: [(call: String, number: Int)] = [
    ("renameat", 1), ("renameat", 2), ("renameat", 3), ("renameat", 4), ("fsync", 2),
    ("fsync", 3), ("fsync", 4), ("fsync", 5), ("fsync", 6), ("fsync", 7), ("unlinkat", 1),
    ("unlinkat", 2), ("write", 2), ("write", 4), ("fchmod", 7), ("flock", 5), ("fdatasync", 1),
    ("fdatasync", 2), ("pwrite64", 1), ("syncfs", 1),
  ]

  /// The indices in ``killPoints`` of the outside tester's points, after the commit point of a
  /// sign-in with a new key.
  static let afterCommitPoint: Set<Int> = Set(
    killPoints.indices.filter { index in
      let point = "\(killPoints[index].call)#\(killPoints[index].number)"
      return [
        // Not `flock#5`: planning the generation takes the mark's lock once more, so that
        // `flock` now comes before the commit point.
        "renameat#2", "renameat#3", "fsync#4", "fsync#5", "fsync#6", "unlinkat#1", "write#4",
        "fchmod#7",
      ].contains(point)
    })

  static let cases: [(Before, Int)] = Before.allCases.flatMap { before in
    killPoints.indices.map { (before, $0) }
  }

  @Test(arguments: cases)
  func aKilledResealingSignInLeavesTheOldOrTheNewSetReadable(_ before: Before, _ index: Int)
    throws
  {
    let (call, number) = Self.killPoints[index]
    let strace = try #require(toolPath("strace"))
    let root = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-reseal")
    defer { root.remove() }
    let store = root.appending("store")
    let keyA = ["--seal", "file:" + root.appending("a.key")]
    let keyB = ["--seal", "file:" + root.appending("b.key")]
    for (name, text) in [("old", "OLD"), ("new", "NEW"), ("keep", "KEEP")] {
      try Data(text.utf8).write(to: URL(fileURLWithPath: root.appending(name)))
    }
    let old: [String]
    switch before {
    case .otherKey: old = keyA
    case .unsealed: old = []
    case .alteredSeal: old = keyB
    }
    let first = try binary.run(
      [
        "sign-in", "--store", store, "--put", "token=" + root.appending("old"), "--put",
        "other=" + root.appending("keep"),
      ] + old)
    try #require(first.exitCode == 0, "\(first.standardError)")
    if before == .alteredSeal {
      // One byte of slot 0's MAC: its checksum still holds, so its generation is salvaged.
      let record = URL(fileURLWithPath: store + "/clock-mark")
      var bytes = try Data(contentsOf: record)
      bytes[FileClockMarkStore.sealOffset(0) + MarkSeal.length - 1] ^= 0x01
      try bytes.write(to: record)
    }
    let signIn = ["sign-in", "--store", store, "--put", "token=" + root.appending("new")] + keyB
    let killed = try binary.run(
      signIn,
      launcher: killedAt(strace: strace, call, occurrence: number), timeout: .seconds(20))
    let label =
      "\(before) \(call) #\(number) (exit \(killed.exitCode.map { String($0) } ?? "none"))"
    func read(_ key: String, _ seal: [String]) throws -> String {
      let result = try binary.run(
        ["read", "--store", store, "--max-age", "7d", key] + seal, timeout: .seconds(20))
      return result.standardOutput + "(\(result.exitCode.map { String($0) } ?? "none"))"
    }
    let oldReads = try [read("token", old), read("other", old)]
    let newReads = try [read("token", keyB), read("other", keyB)]
    // The new set: the new key's token; `other` is carried only where the old set
    // authenticates with the new key (the same key over an altered record).
    let newSet = ["NEW(0)", before == .alteredSeal ? "KEEP(0)" : "(2)"]
    let committed = newReads == newSet
    if committed {
      if before != .alteredSeal {
        // The old configuration reads nothing once the record is sealed with the new key.
        #expect(oldReads.allSatisfy { $0.hasSuffix("(1)") }, "\(label): \(oldReads)")
      }
    } else if before == .alteredSeal {
      // Not committed: the altered record is refused with either key, nothing served.
      #expect(newReads.allSatisfy { $0.hasSuffix("(1)") }, "\(label): \(newReads)")
    } else {
      #expect(oldReads == ["OLD(0)", "KEEP(0)"], "\(label): old \(oldReads), new \(newReads)")
      #expect(newReads.allSatisfy { $0.hasSuffix("(1)") }, "\(label): \(newReads)")
    }
    // The points the outside tester found are after the commit point (so the test cannot
    // pass by never reaching it); a sign-in that finished is committed too.
    if killed.exitCode == 0 || (before == .otherKey && Self.afterCommitPoint.contains(index)) {
      #expect(committed, "\(label): \(newReads)")
    }
    let again = try binary.run(signIn, timeout: .seconds(20))
    #expect(again.exitCode == 0, "\(label): \(again.standardError)")
    #expect(try read("token", keyB) == "NEW(0)", "\(label)")
  }
}
