import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @testable import OfflineTTL

/// An honest sealed read that a commit falls into (between its read of the mark and of the
/// index, or of the index and of the item) is never refused: the mark, index and item are read
/// again under the item store's shared lock before anything is refused. Each interleaving is
/// forced at its exact point by a hook on the reading task; each failed before the fix with the
/// refusal named in its case (the first is the outside tester's: `index_unauthentic: … it
/// belongs to generation 61, the clock mark to 60`, while sign-ins ran).
@Suite struct SealedConcurrentCommitTests {
  typealias Fixture = SealedStoreTests.Fixture
  typealias Point = DirectoryCacheStore.SealedReadPoint

  /// Runs `body` with `hooks` bound to this task's sealed reads, and checks that every hook ran
  /// (so the interleaving really happened).
  func interleaving<R>(
    _ hooks: [Point: @Sendable () -> Void], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
  ) rethrows -> R {
    let hook = DirectoryCacheStore.SealedReadHook(hooks)
    let result = try DirectoryCacheStore.$sealedReadHook.withValue(hook) { try body() }
    #expect(hook.pending.isEmpty, "every hook ran: \(hook.pending)", sourceLocation: sourceLocation)
    return result
  }

  /// A sign-in (from its own gate, as another process would) writing `token` = `value`.
  func signIn(_ f: Fixture, _ value: String) -> @Sendable () -> Void {
    let store = f.store
    let key = f.keyPath
    let clock = f.clock
    return {
      let provider = FileSealingKeyProvider(path: key)
      let gate = OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: store, sealing: provider),
        marks: FileClockMarkStore(atPath: store, sealing: provider),
        policy: try! EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: clock)
      clock.advance(by: .seconds(1))
      #expect(
        (try? gate.beginOnlineSession(writing: [(try! CacheItemKey("token"), Data(value.utf8))]))
          != nil, "the concurrent sign-in committed")
    }
  }

  /// The outside tester's example: a check whose fallback summary reads the mark (generation
  /// g), then a sign-in commits and rolls forward (g+1), then the index is read. It was
  /// refused `index_unauthentic: … belongs to generation g+1, the clock mark to g`.
  @Test func aCheckThatASignInFallsIntoIsFresh() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1"])
    let gate = try f.gate()
    // The sign-in makes the index read stale before the mark is observed: the check judges
    // the new set from the start (before, it read the store's own summary, mark first, index
    // after, where the outside tester's second sign-in fell; the store-level tests below force
    // that one), with clocks read after that set was committed.
    let decision = interleaving([.afterDeferredIndex: signIn(f, "gen2")]) {
      gate.checkEligibility()
    }
    #expect(decision.cacheError == nil, "\(decision.cacheError.map { "\($0)" } ?? "")")
    #expect(decision.status == .fresh, "\(decision.reasons)")
    #expect(decision.generation == 2)
  }

  /// The same for a read: the reader's recheck meets a newer generation and judges the new set
  /// (the check above) before it reads the item; the item served is the newest sign-in's.
  @Test func aReadThatSignInsFallIntoServesTheNewestItem() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1"])
    guard case .opened(let reader) = try f.gate().openOffline() else {
      throw SignInGenerationTests.Failure("the store was not fresh")
    }
    signIn(f, "gen2")()
    let item = try interleaving([.afterDeferredIndex: signIn(f, "gen3")]) {
      try reader.item(forKey: "token")
    }
    #expect(item.map { String(decoding: $0.payload, as: UTF8.self) } == "gen3")
    #expect(reader.decision.generation == 3)
  }

  /// Every read of the store itself (no gate) with a sign-in between its read of the mark and
  /// of the index: before, each was `index_unauthentic` (the index a generation ahead).
  @Test(arguments: ["summary", "item", "keys"])
  func aStoreReadWithASignInAfterItsMarkReadIsNotRefused(_ read: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1", "profile": "p"])
    let store = DirectoryCacheStore(
      atPath: f.store, sealing: FileSealingKeyProvider(path: f.keyPath))
    try interleaving([.afterMarkBinding: signIn(f, "gen2")]) { () throws in
      switch read {
      case "summary": #expect(try store.summary().count == 2)
      case "item":
        #expect(try store.item(forKey: "token")?.payload == Data("gen2".utf8))
      default: #expect(try store.keys().map(\.rawValue) == ["profile", "token"])
      }
    }
  }

  /// A check while a committed sign-in's staging is not rolled forward observes the mark
  /// (generation g) and asks for the set of g; a sign-in that finishes g and commits g+1 in
  /// between leaves no set of g. Before, that was refused (`index_unauthentic: … belongs to
  /// generation g+1`); the check now sees the generation moved and judges again.
  @Test func aCheckOfAStagedSetThatASignInFinishesMeanwhileIsFresh() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1"])
    f.clock.advance(by: .seconds(1))
    _ = try SealedStoreTests().gateThatCannotRollForward(f).beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("gen2".utf8))])
    #expect(FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    let gate = try f.gate()
    let decision = interleaving([.afterMarkBinding: signIn(f, "gen3")]) {
      gate.checkEligibility()
    }
    #expect(decision.cacheError == nil, "\(decision.cacheError.map { "\($0)" } ?? "")")
    #expect(decision.status == .fresh, "\(decision.reasons)")
    #expect(decision.generation == 3)
  }

  /// A commit between the read of the index and the open of the item: the item renamed in is a
  /// generation ahead of the index read (`item_unauthentic: … from generation 2, the index
  /// expects 1`), a deleted key's file is gone (`… in the sealed index but its file is
  /// missing`), an added key's file is not in the index read (`… not in the sealed index`).
  @Test(arguments: ["replaced by a sign-in", "deleted by a session", "added by a session"])
  func anItemReadWithACommitBeforeItsFileIsNotRefused(_ change: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let session = try f.gate().beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("gen1".utf8))])
    let store = DirectoryCacheStore(
      atPath: f.store, sealing: FileSealingKeyProvider(path: f.keyPath))
    let commit: @Sendable () -> Void
    let expected: String?
    switch change {
    case "replaced by a sign-in":
      commit = signIn(f, "gen2")
      expected = "gen2"
    case "deleted by a session":
      commit = { #expect((try? session.delete(try! CacheItemKey("token"))) != nil) }
      expected = nil
    default:
      commit = { #expect((try? session.write(try! CacheItemKey("extra"), Data("x".utf8))) != nil) }
      expected = "x"
    }
    let key: CacheItemKey = change == "added by a session" ? "extra" : "token"
    let item = try interleaving([.beforeItemFile: commit]) { try store.item(forKey: key) }
    #expect(item.map { String(decoding: $0.payload, as: UTF8.self) } == expected)
  }

  /// What a commit cannot explain is still refused after the locked look: an index of an older
  /// generation put back, a copy of an older item, an item the index does not list.
  @Test(arguments: ["older index", "older item", "unlisted item"])
  func aForgeryIsStillRefusedAfterTheLockedLook(_ forgery: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1"])
    let oldIndex = try f.bytes("cache/index")
    let oldItem = try f.bytes("cache/items/token")
    try f.signIn(["token": "gen2"])
    let code: StoreError.Code
    switch forgery {
    case "older index":
      try f.write(oldIndex, "cache/index")
      code = .indexUnauthentic
    case "older item":
      try f.write(oldItem, "cache/items/token")
      code = .itemUnauthentic
    default:
      try f.write(oldItem, "cache/items/other")
      code = .itemUnauthentic
    }
    let before = try f.snapshot()
    let store = DirectoryCacheStore(
      atPath: f.store, sealing: FileSealingKeyProvider(path: f.keyPath))
    let key: CacheItemKey = forgery == "unlisted item" ? "other" : "token"
    #expect {
      _ = try store.item(forKey: key)
    } throws: { error in
      (error as? StoreError)?.code == code
    }
    #expect(try f.snapshot() == before, "left alone")
  }

  /// A sealed store whose index is missing and whose `items/` is empty holds nothing: it is
  /// `unavailable`, not `index_unauthentic: … missing while items exist` (the outside tester's
  /// F9); with an item file left it is refused, naming how many.
  @Test func aMissingIndexOverAnEmptyItemsDirectoryIsAnEmptyStore() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "gen1"])
    try FileManager.default.removeItem(atPath: f.store + "/cache/index")
    let store = DirectoryCacheStore(
      atPath: f.store, sealing: FileSealingKeyProvider(path: f.keyPath))
    #expect {
      _ = try store.summary()
    } throws: { error in
      "\(error)".contains("it is missing while 1 item file is in")
    }
    try FileManager.default.removeItem(atPath: f.store + "/cache/items/token")
    #expect(try store.summary() == .empty)
    #expect(try f.gate().checkEligibility().status == .unavailable)
  }
}
