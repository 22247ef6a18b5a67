import Foundation
@_spi(Testing) import OfflineTTL
import OfflineTTLTesting
import Testing

/// A gate whose item store and clock-mark store are sealed differently is refused up front,
/// with `stores_sealed_differently`, by every operation, before anything is read or written; a
/// gate whose stores share one provider (two values naming the same key file) works.
@Suite struct OfflineAccessGateSealingConflictTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  /// Which provider each store gets: `nil` (unsealed), or the name of a key file in the root.
  static let pairs: [(cache: String?, marks: String?)] = [
    ("a.key", nil), (nil, "a.key"), ("a.key", "b.key"), ("keys/k", "other/k"),
    ("keys/k", "keys/k/"),
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
    for directory in ["keys", "other"] {
      try FileManager.default.createDirectory(
        atPath: root.path + "/" + directory, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
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
    #expect(made.sorted() == ["keys", "other"], "\(label): \(made)")
    for directory in ["keys", "other"] {
      let keys = try FileManager.default.contentsOfDirectory(atPath: root.path + "/" + directory)
      #expect(keys.isEmpty, "\(label): \(keys)")
    }
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

  /// How the item store's provider and the mark store's provider spell one key file
  /// `<root>/keys/k`: each spelling (`.`, a doubled `/`, `..`, a symbolic link to `keys`, a
  /// path relative to the working directory) names the same key, so the gate has no conflict,
  /// signs in, reads fresh, and made one key file.
  enum Spelling: String, CaseIterable, Sendable {
    case dot, doubledSlash, dotDot, linkedDirectory, relative

    func path(root: String) -> String {
      switch self {
      case .dot: root + "/keys/./k"
      case .doubledSlash: root + "/keys//k"
      case .dotDot: root + "/other/../keys/k"
      case .linkedDirectory: root + "/link/k"
      case .relative: Self.relative(root + "/keys/k")
      }
    }

    /// `absolute` spelt relative to the working directory (`../` up to the root, then the
    /// path), so no test changes the process's working directory.
    static func relative(_ absolute: String) -> String {
      let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
      return String(repeating: "../", count: depth) + absolute.dropFirst()
    }
  }

  @Test(arguments: Spelling.allCases)
  func oneKeySpeltTwoWaysIsOneProvider(_ spelling: Spelling) throws {
    let root = try TemporaryStoreDirectory(prefix: "sealing-spelt")
    defer { root.remove() }
    for directory in ["keys", "other"] {
      try FileManager.default.createDirectory(
        atPath: root.path + "/" + directory, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    try FileManager.default.createSymbolicLink(
      atPath: root.path + "/link", withDestinationPath: root.path + "/keys")
    let plain = FileSealingKeyProvider(path: root.path + "/keys/k")
    let spelt = spelling.path(root: root.path)
    // The mark store's provider traces its system calls: inside one operation the mark store
    // uses the key the item store loaded, so it never reads the key file itself.
    let trace = SyscallFaultPlan()
    for (cacheKey, marksKey) in [
      (plain, FileSealingKeyProvider(path: spelt, faults: trace)),
      (FileSealingKeyProvider(path: spelt), FileSealingKeyProvider(path: root.path + "/keys/k")),
    ] {
      #expect(cacheKey.description != marksKey.description)
      #expect(cacheKey.keyIdentity() == marksKey.keyIdentity(), "\(spelling)")
    }
    let store = root.path + "/store"
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store, sealing: plain),
      marks: FileClockMarkStore(
        atPath: store, sealing: FileSealingKeyProvider(path: spelt, faults: trace)),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: ManualWallClock(Self.start))
    #expect(gate.sealingConflict == nil, "\(spelling): \(String(describing: gate.sealingConflict))")
    #expect("\((gate.marks as? FileClockMarkStore)?.sealing as Any)".contains(spelt))
    let before = trace.trace.count
    try gate.beginOnlineSession(writing: [(CacheItemKey("token"), Data("t".utf8))])
    #expect(
      trace.trace.count == before,
      "\(spelling): the mark store loaded the key itself: \(trace.trace[before...])")
    let decision = gate.checkEligibility()
    #expect(decision.status == .fresh, "\(spelling): \(decision.reasons)")
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("\(spelling): refused after a sign-in")
      return
    }
    #expect(try reader.item(forKey: CacheItemKey("token"))?.payload == Data("t".utf8))
    // One key file, made by the sign-in; nothing beside it.
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/keys") == ["k"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/other").isEmpty)
  }

  /// Identities compare part by part: a provider that does not say (the protocol's default)
  /// is alike only to one that describes itself alike, and never to a key file.
  @Test func identitiesCompareKindAndEveryPart() {
    struct Named: SealingKeyProvider {
      let description: String
      func loadKey() throws(SealingKeyError) -> SealingKey {
        throw SealingKeyError(code: .missing, reason: "none")
      }
      func loadOrCreateKey() throws(SealingKeyError) -> SealingKey { try loadKey() }
    }
    #expect(Named(description: "x").keyIdentity() == Named(description: "x").keyIdentity())
    #expect(Named(description: "x").keyIdentity() != Named(description: "y").keyIdentity())
    #expect(
      Named(description: "key file /k").keyIdentity()
        != FileSealingKeyProvider(path: "/k").keyIdentity())
    #expect(
      SealingKeyIdentity(kind: "k", parts: ["a/b", "c"])
        != SealingKeyIdentity(kind: "k", parts: ["a", "b/c"]))
    #expect(
      FileSealingKeyProvider(path: "/no-such-dir/./k").keyIdentity().parts == ["/no-such-dir/k"])
  }
}
