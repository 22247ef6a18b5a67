import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// What a newer sign-in does to a reader opened before it, and what happens to a staging left
/// by a sign-in that never reached its commit point, on real files (unsealed and sealed).
@Suite struct SignInGenerationTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  typealias Fixture = DirectoryGateFixture

  struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// A staging left by a sign-in that stopped before its commit point: offline checks and
  /// reads never touch it (nor serve it), further failed sign-ins replace it rather than add
  /// to it (one staging at most, of one sign-in's items), and the next sign-in removes it.
  @Test(arguments: [false, true])
  func staleStagingIsReclaimedOnlyByASignInAndBounded(sealed: Bool) throws {
    let f = try Fixture(prefix: "sign-in-generation", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    f.clock.advance(by: .seconds(60))
    var big: [String: String] = ["token": "new"]
    for index in 0..<50 { big["bulk-\(index)"] = String(repeating: "x", count: 100) }
    try f.signInThatNeverCommits(big)
    #expect(try f.stagings() == ["next-2"])
    let before = try f.cacheTree()
    // Offline checks, opens, reads and key listings: nothing under cache/ changes.
    for _ in 0..<3 {
      #expect(f.gate().checkEligibility().isFresh)
      let reader = try f.openReader()
      #expect(try reader.item(forKey: "token")?.payload == Data("old".utf8))
      #expect(try reader.item(forKey: "bulk-0") == nil)
      #expect(try reader.keys().map(\.rawValue) == ["token"])
    }
    #expect(try f.cacheTree() == before)
    // Failed sign-ins again: still one staging, holding only the last one's items.
    for round in 0..<3 {
      try f.signInThatNeverCommits(["token": "again \(round)"])
      #expect(try f.stagings() == ["next-2"])
      let staged = try FileManager.default.contentsOfDirectory(
        atPath: f.store + "/cache/next-2/items")
      #expect(staged == ["token"], "\(staged)")
    }
    // The next sign-in, even one with no items, reclaims it and leaves the store settled.
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    #expect(try f.openReader().item(forKey: "token")?.payload == Data("old".utf8))
    try f.signIn(["other": "x"])
    #expect(try f.stagings().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    let reader = try f.openReader()
    #expect(try reader.item(forKey: "token")?.payload == Data("old".utf8))
    #expect(try reader.item(forKey: "other")?.payload == Data("x".utf8))
  }

  /// Where the newer sign-in commits, relative to the reader's read.
  enum SignInPoint: String, CaseIterable, CustomStringConvertible {
    /// Between the open and the read.
    case beforeTheRead
    /// After the read's recheck, before the item is read.
    case beforeTheItem
    /// After the item was read, before the generation is read again.
    case afterTheItem
    var description: String { rawValue }
  }

  /// A reader opened before a newer sign-in committed judges the new set as a new open would,
  /// and serves the new set's items only with the new set's decision, wherever in the read the
  /// sign-in lands (forced with a hook in the item store).
  @Test(arguments: [false, true], SignInPoint.allCases)
  func aReaderJudgesANewerSignInsSetAsANewOpenWould(sealed: Bool, point: SignInPoint) throws {
    let f = try Fixture(prefix: "sign-in-generation", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "old", "profile": "old profile"])
    let hooked = HookedCacheStore(DirectoryCacheStore(atPath: f.store, sealing: f.provider))
    guard case .opened(let reader) = f.gate(cache: hooked).openOffline() else {
      throw Failure("the store was not fresh")
    }
    let opened = try #require(reader.decision.generation)
    f.clock.advance(by: .seconds(60))
    let newer: () -> Void = {
      #expect((try? f.signIn(["token": "new"])) != nil, "the newer sign-in committed")
    }
    switch point {
    case .beforeTheRead: newer()
    case .beforeTheItem: hooked.once(at: .beforeTheItem, newer)
    case .afterTheItem: hooked.once(at: .afterTheItem, newer)
    }
    let item = try #require(try reader.item(forKey: "token"))
    #expect(item.payload == Data("new".utf8))
    let decision = reader.decision
    #expect(decision.isFresh)
    #expect(decision.generation == opened + 1, "the item was served by the new set's decision")
    #expect(decision.items?.count == 2)
    #expect(decision.items?.newest == item.writtenAt)
    #expect(decision.items?.oldest == SignInGenerationTests.start)
    #expect(try reader.item(forKey: "profile")?.payload == Data("old profile".utf8))
    #expect(try reader.keys().map(\.rawValue) == ["profile", "token"])
    // The keys of a newer set are judged the same way.
    hooked.once(at: .beforeTheItem) {
      f.clock.advance(by: .seconds(1))
      #expect((try? f.signIn(["extra": "x"])) != nil, "the newer sign-in committed")
    }
    #expect(try reader.keys().map(\.rawValue) == ["extra", "profile", "token"])
    #expect(reader.decision.generation == opened + 2)
  }

  /// A newer sign-in's set that a new open would refuse is refused with that decision's
  /// reasons (here the wall clock went behind the new sign-in's mark), and one that left
  /// nothing cached reads as absent; the reader keeps its decision either way.
  @Test(arguments: [false, true])
  func aNewerSignInsSetThatIsNotFreshIsRefusedWithItsOwnReasons(sealed: Bool) throws {
    let f = try Fixture(prefix: "sign-in-generation", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    let reader = try f.openReader()
    let opened = reader.decision
    f.clock.advance(by: .seconds(3_600))
    try f.signIn(["token": "new"])
    f.clock.moveBack(by: .seconds(3_000))
    do {
      _ = try reader.item(forKey: "token")
      Issue.record("a set judged expired was served")
    } catch {
      let refusing = try #require(error.decision, "the newer set's decision")
      #expect(refusing.status == .expired)
      #expect(refusing.generation == (opened.generation ?? 0) + 1)
      #expect(error.reasons == refusing.reasons)
      #expect(error.reasons.contains(.clockBehindMark))
      #expect(error.code == .clockBehindMark)
    }
    #expect(reader.decision == opened)

    // A newer sign-in that signs out: nothing is cached, so nothing is served.
    f.clock.advance(by: .seconds(3_000))
    let reader2 = try f.openReader()
    let session = try f.gate().beginOnlineSession()
    try session.signOut()
    #expect(try reader2.item(forKey: "token") == nil)
    #expect(try reader2.keys().isEmpty)
  }

  /// The sign-in's own roll forward reads nothing back: over a consistent store of 1,000 items,
  /// a sign-in of 10 items opens each of the 990 items it carries once (judged as a read would
  /// judge it) and no other, `stat`s no staged entry one by one, and leaves a store whose index
  /// serves the next check on the fast path with the new set.
  @Test func aSignInsRollForwardReadsNoItemBack() throws {
    let f = try Fixture(prefix: "sign-in-generation")
    defer { f.root.remove() }
    var bulk: [String: String] = [:]
    for index in 0..<1_000 { bulk["bulk-\(index)"] = "payload \(index)" }
    try f.signIn(bulk)
    f.clock.advance(by: .seconds(60))
    let plan = SyscallFaultPlan()
    let counted = f.gate(cache: DirectoryCacheStore(atPath: f.store, faults: plan))
    var changed: [String: String] = [:]
    for index in 0..<10 { changed["bulk-\(index * 100)"] = "new \(index)" }
    try f.signIn(changed, gate: counted)
    #expect(plan.count(of: .renameat) == 10 + 1, "the 10 items and the index")
    // The 990 items carried are judged as a read would (header, then the payload once); the
    // roll forward reads none of them back.
    #expect(
      (2 * 990...2 * 990 + 4).contains(plan.count(of: .pread)),
      "index headers and each carried item once: \(plan.count(of: .pread))")
    #expect(plan.count(of: .openat) <= 990 + 40, "opens: \(plan.count(of: .openat))")
    #expect(plan.count(of: .fstatat) <= 40, "stats: \(plan.count(of: .fstatat))")
    plan.resetCounts()
    let decision = counted.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.items?.count == 1_000)
    #expect(
      decision.items?.newest == SignInGenerationTests.start.saturatingAdvanced(by: .seconds(60)))
    #expect(plan.count(of: .readdir) == 0, "the check took the fast path")
    #expect(try f.stagings().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    let reader = try f.openReader()
    #expect(try reader.item(forKey: "bulk-100")?.payload == Data("new 1".utf8))
    #expect(try reader.item(forKey: "bulk-101")?.payload == Data("payload 101".utf8))
    #expect(try reader.keys().count == 1_000)
  }
}

extension DirectoryGateFixture {
  fileprivate func openReader() throws -> OfflineCacheReader {
    guard case .opened(let reader) = gate().openOffline() else {
      throw SignInGenerationTests.Failure("the store was not fresh")
    }
    return reader
  }

  /// The names in `cache/` that are stagings.
  fileprivate func stagings() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: store + "/cache")
      .filter { $0.hasPrefix("next-") }.sorted()
  }

  /// Every path under `cache/` with its size, for comparing before and after.
  fileprivate func cacheTree() throws -> [String: Int] {
    var tree: [String: Int] = [:]
    let base = store + "/cache"
    for path in try FileManager.default.subpathsOfDirectory(atPath: base) {
      let attributes = try FileManager.default.attributesOfItem(atPath: base + "/" + path)
      tree[path] = (attributes[.size] as? Int) ?? 0
    }
    return tree
  }

  /// A sign-in whose mark reset fails (its first `fdatasync` fails and the previous record is
  /// put back): it stages `items` and stops before its commit point.
  fileprivate func signInThatNeverCommits(_ items: [String: String]) throws {
    let plan = SyscallFaultPlan()
    plan.fail(.fdatasync, occurrence: 1, with: .ioError)
    let failing = gate(
      marks: FileClockMarkStore(atPath: store, faults: plan, sealing: provider))
    #expect(throws: OnlineSessionError.self) { try signIn(items, gate: failing) }
  }
}
