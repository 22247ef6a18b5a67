import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// Offline paths never write, in every state a killed sign-in can leave
/// (`docs/sign-in-protocol.md`, "Offline checks never write or reclaim"): `strace` kills a
/// `sign-in` at each of its writing system calls in turn (every occurrence of each kind), and
/// after each kill the check, the open, every read, the key listing and the item verification
/// run on the store, which must then hold every byte, name and mode it held before them. One
/// more state is made by hand: `pending` with no staging (a session commit, or a sign-in's last
/// step, killed), where an older check rewrote the index and removed `pending`.
@Suite(.enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"))
struct OfflineNeverWritesTests {
  /// The system calls that change a store, each killed at every occurrence in turn (files are
  /// created by `openat`, but the writes into them follow it, and the loader's own opens come
  /// first: killing at each `write` covers a created file).
  static let kinds = [
    "mkdirat", "write", "pwrite64", "fsync", "syncfs", "fdatasync", "renameat", "unlinkat",
  ]
  /// At most this many occurrences of one kind (a sign-in of three items makes fewer).
  static let maximumOccurrences = 40
  static let keys = ["a", "b", "c", "d"]

  /// Every offline path, in process, on a clock standing at the stored mark (so the check's
  /// observation has nothing to raise: any write it made would be one it must not make).
  static func runEveryOfflinePath(store: String, keyFile: String?) throws {
    let sealing = keyFile.map { FileSealingKeyProvider(path: $0) }
    let marks = FileClockMarkStore(atPath: store, sealing: sealing)
    let cache = DirectoryCacheStore(atPath: store, sealing: sealing)
    let mark = (try? marks.read())?.mark ?? WallClockInstant(nanosecondsSinceEpoch: 0)
    let gate = OfflineAccessGate(
      cache: cache, marks: marks,
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: ManualWallClock(mark), bootClock: nil)
    let decision = gate.checkEligibility()
    if case .opened(let reader) = gate.openOffline() {
      for key in keys { _ = try? reader.item(forKey: try CacheItemKey(key)) }
      _ = try? reader.keys()
    }
    _ = try? cache.summary()
    _ = try? cache.summaryIfSettled()
    _ = try? cache.keys()
    for key in keys { _ = try? cache.item(forKey: try CacheItemKey(key)) }
    _ = gate.verifyItems(against: decision)
  }

  /// What a killed sign-in left, for the count of states reached.
  static func stateName(_ store: String) -> String {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: store + "/cache")) ?? []
    let staging = names.contains { $0.hasPrefix("next-") }
    let pending = names.contains("pending")
    return "\(pending ? "pending" : "no pending"), \(staging ? "staging" : "no staging")"
  }

  @Test(arguments: [false, true])
  func noOfflinePathWritesInAnyStateAKilledSignInLeaves(sealed: Bool) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-never-writes")
    defer { scratch.remove() }
    let keyFile = sealed ? scratch.appending("sealing.key") : nil
    let seal = keyFile.map { ["--seal", "file:\($0)"] } ?? []
    var inputs: [String: String] = [:]
    for (name, text) in [("one", "first"), ("two", "second"), ("three", "third")] {
      inputs[name] = scratch.appending("input-\(name)")
      try Data(text.utf8).write(to: URL(fileURLWithPath: inputs[name]!))
    }
    let runner = try BinaryRunner()
    var points = 0
    var states: [String: Int] = [:]
    var changed: [String] = []
    for kind in Self.kinds {
      for occurrence in 1...Self.maximumOccurrences {
        let store = scratch.appending("store-\(kind)-\(occurrence)")
        let first = try runner.run(
          ["sign-in", "--store", store] + seal + [
            "--put", "a=\(inputs["one"]!)", "--put", "b=\(inputs["two"]!)",
          ])
        try #require(first.exitCode == 0, "\(first.standardError)")
        let killed = try runner.run(
          ["sign-in", "--store", store] + seal + [
            "--put", "a=\(inputs["two"]!)", "--put", "c=\(inputs["three"]!)",
          ],
          launcher: killedAt(kind, occurrence: occurrence), timeout: .seconds(60))
        defer { try? FileManager.default.removeItem(atPath: store) }
        // The sign-in made fewer calls of this kind: every occurrence was swept.
        if killed.exitCode == 0 { break }
        points += 1
        states[Self.stateName(store), default: 0] += 1
        let before = try StoreBytes(store)
        try Self.runEveryOfflinePath(store: store, keyFile: keyFile)
        let after = try StoreBytes(store)
        if after != before {
          changed.append("\(kind) #\(occurrence): \(after.differences(from: before))")
        }
      }
    }
    // By hand: a completed sign-in, then `pending` with no staging.
    let store = scratch.appending("store-pending")
    let signIn = try runner.run(
      ["sign-in", "--store", store] + seal + ["--put", "a=\(inputs["one"]!)"])
    try #require(signIn.exitCode == 0, "\(signIn.standardError)")
    try Data().write(to: URL(fileURLWithPath: store + "/cache/pending"))
    let before = try StoreBytes(store)
    try Self.runEveryOfflinePath(store: store, keyFile: keyFile)
    let after = try StoreBytes(store)
    if after != before {
      changed.append("pending without staging: \(after.differences(from: before))")
    }
    print(
      "offline never writes\(sealed ? " (sealed)" : ""): \(points) kill points, states \(states)")
    #expect(changed.isEmpty, "\(changed)")
    #expect(points >= 20, "the sign-in was killed at \(points) points")
  }
}
