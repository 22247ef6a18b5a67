import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// A long-lived gate in this process, whose item summary reads through kept-open descriptors,
/// beside sign-ins made by the built binary in other processes: each sign-in renames a new
/// index (and new items) into place, and the very next check judges the new set.
@Suite struct KeptOpenSummaryEndToEndTests {
  @Test func aLongLivedGateJudgesTheSetAnotherProcessSignedIn() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-kept-summary")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("token".utf8).write(to: URL(fileURLWithPath: token))
    let runner = try BinaryRunner()
    let first = try runner.run(["sign-in", "--store", store, "--put", "a=\(token)"])
    #expect(first.exitCode == 0, "\(first.standardError)")

    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store), marks: FileClockMarkStore(atPath: store),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400)))
    var oldest: WallClockInstant? = nil
    for _ in 0..<4 {
      let decision = gate.checkEligibility()
      #expect(decision.isFresh, "\(decision.reasons)")
      #expect(decision.items?.count == 1)
      oldest = decision.items?.oldest
    }

    let second = try runner.run([
      "sign-in", "--store", store, "--put", "a=\(token)", "--put", "b=\(token)", "--put",
      "c=\(token)",
    ])
    #expect(second.exitCode == 0, "\(second.standardError)")
    let after = gate.checkEligibility()
    #expect(after.isFresh, "\(after.reasons)")
    #expect(after.items?.count == 3, "the new index, not the kept one")
    let newOldest = try #require(after.items?.oldest)
    #expect(newOldest > (try #require(oldest)), "every item was written again")
    let fresh = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store), marks: FileClockMarkStore(atPath: store),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400)))
    for _ in 0..<3 {
      #expect(gate.checkEligibility().items == fresh.checkEligibility().items)
    }
  }
}
