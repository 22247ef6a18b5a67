import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// A status report of the stale stagings is bounded: however many `cache/next-*` directories a
/// writer of the store made, it reads the mark record once, opens at most
/// `maximumJudgedStagings` of them, and names only the first few (with how many in all).
@Suite struct DirectoryCacheStoreStaleStagingTests {
  /// A store signed in once (generation 1) holding `numbered` stagings `next-2` … and `zeros`
  /// more spelt `next-0`, `next-00`, … (generation 0, which a record of generation 1 could
  /// commit, so each must be judged on its id) or, sealed, `next-1`, `next-01`, … (the
  /// record's own generation).
  static func store(sealed: Bool, numbered: Int, spellings: Int) throws
    -> (SealedStoreTests.Fixture, gate: OfflineAccessGate)
  {
    let fixture = try SealedStoreTests.Fixture()
    let gate = try fixture.gate(sealed: sealed)
    try fixture.signIn(["token": "t"], gate: gate)
    let cache = fixture.store + "/cache/"
    for index in 0..<numbered {
      try FileManager.default.createDirectory(
        atPath: cache + "next-\(index + 2)", withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    for zeros in 1...spellings {
      let name = "next-" + String(repeating: "0", count: zeros) + (sealed ? "1" : "")
      try FileManager.default.createDirectory(
        atPath: cache + name, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    return (fixture, gate)
  }

  @Test(arguments: [false, true])
  func aReportOfThousandsOfStagingsOpensABoundedNumber(sealed: Bool) throws {
    let (fixture, _) = try Self.store(sealed: sealed, numbered: 2_000, spellings: 40)
    defer { fixture.root.remove() }
    let plan = SyscallFaultPlan()
    let provider: (any SealingKeyProvider)? =
      sealed ? FileSealingKeyProvider(path: fixture.keyPath) : nil
    let store = DirectoryCacheStore(atPath: fixture.store, faults: plan, sealing: provider)
    let all = try store.staleStagings()
    #expect(all.count == 2_040)
    // The mark record once, the key once, and at most 16 stagings (two opens each).
    #expect(plan.count(of: .openat) <= 2 * 16 + 24, "opens: \(plan.count(of: .openat))")
    plan.resetCounts()
    let bounded = try store.staleStagings(naming: 3)
    #expect(bounded.count == 2_040)
    #expect(bounded.names == Array(all.prefix(3)))
    // Sorted as strings: sealed, the spelling with the most zeros first.
    func zeros(_ count: Int) -> String { "next-" + String(repeating: "0", count: count) }
    let first: [String] =
      sealed ? [40, 39, 38].map { zeros($0) + "1" } : [1, 2, 3].map { zeros($0) }
    #expect(bounded.names == first)
    #expect(plan.count(of: .openat) <= 2 * 16 + 24, "opens: \(plan.count(of: .openat))")
    let none = try store.staleStagings(naming: 0)
    #expect(none.count == 2_040 && none.names.isEmpty)
  }
}
