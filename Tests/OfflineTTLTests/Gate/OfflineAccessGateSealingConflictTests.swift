import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// A gate whose item store and clock-mark store are sealed differently is refused up front,
/// with `stores_sealed_differently`, by every operation, before anything is read or written; a
/// gate whose stores share one provider (two values naming the same key file) works.
@Suite struct OfflineAccessGateSealingConflictTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  /// Which provider each store gets: `nil` (unsealed), or the name of a key file in the root.
  static let pairs: [(cache: String?, marks: String?)] = [
    ("a.key", nil), (nil, "a.key"), ("a.key", "b.key"),
  ]

  static func gate(root: String, cache: String?, marks: String?) throws -> OfflineAccessGate {
    let store = root + "/store"
    return OfflineAccessGate(
      cache: DirectoryCacheStore(
        atPath: store, sealing: cache.map { FileSealingKeyProvider(path: root + "/" + $0) }),
      marks: FileClockMarkStore(
        atPath: store, sealing: marks.map { FileSealingKeyProvider(path: root + "/" + $0) }),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: ManualWallClock(start))
  }

  @Test(arguments: pairs)
  func aPairSealedDifferentlyIsRefusedByEveryOperationAndNothingIsWritten(
    _ pair: (cache: String?, marks: String?)
  ) throws {
    let root = try TemporaryStoreDirectory(prefix: "sealing-conflict")
    defer { root.remove() }
    let gate = try Self.gate(root: root.path, cache: pair.cache, marks: pair.marks)
    let label = "\(pair)"
    #expect(gate.sealingConflict?.code == .storesSealedDifferently, "\(label)")
    let reason = gate.sealingConflict?.message ?? ""
    #expect(reason.contains("same provider"), "\(label): \(reason)")
    do {
      try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("t".utf8))])
      Issue.record("\(label): signed in")
    } catch {
      #expect(error.code == .cacheStoreFailed, "\(label)")
      #expect(error.storeError?.code == .storesSealedDifferently, "\(label): \(error)")
    }
    let decision = gate.checkEligibility()
    #expect(decision.status == .expired, "\(label)")
    #expect(decision.reasons == [.sealMismatch], "\(label): \(decision.reasons)")
    #expect(decision.cacheError?.code == .storesSealedDifferently, "\(label)")
    #expect(decision.markError?.code == .storesSealedDifferently, "\(label)")
    guard case .refused = gate.openOffline() else {
      Issue.record("\(label): opened")
      return
    }
    #expect(throws: StoreError.self) { try gate.recordObservation() }
    // Nothing was made: no store directory, no key.
    let made = try FileManager.default.contentsOfDirectory(atPath: root.path)
    #expect(made.isEmpty, "\(label): \(made)")
  }

  /// Two store values naming the same key file are one provider: no conflict, and the gate
  /// signs in and reads fresh; so does an unsealed pair.
  @Test(arguments: [String?.some("a.key"), nil])
  func aPairSealedAlikeWorks(_ key: String?) throws {
    let root = try TemporaryStoreDirectory(prefix: "sealing-alike")
    defer { root.remove() }
    let gate = try Self.gate(root: root.path, cache: key, marks: key)
    #expect(gate.sealingConflict == nil)
    try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("t".utf8))])
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("refused after a sign-in")
      return
    }
    #expect(try reader.item(forKey: CacheItemKey("token"))?.payload == Data("t".utf8))
  }
}
