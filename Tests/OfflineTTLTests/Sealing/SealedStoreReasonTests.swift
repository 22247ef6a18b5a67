import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// The reasons a sealed store's refusals carry: a mark problem is the mark's, once; a seal
/// problem met by a reader's recheck keeps its own reason; and a verify that meets a newer
/// sign-in checks that sign-in's set against its own decision.
@Suite struct SealedStoreReasonTests {
  typealias Fixture = SealedStoreTests.Fixture

  enum MarkDamage: String, CaseIterable, CustomStringConvertible {
    case emptied, slotByteFlipped, replacedByADirectory
    var description: String { rawValue }
  }

  /// A sealed item store reads the clock mark its index is bound to; when that read fails as
  /// the mark's own does, the decision names the mark's failure once and no item file.
  @Test(arguments: MarkDamage.allCases)
  func aMarkProblemOnASealedStoreIsTheMarksAlone(_ damage: MarkDamage) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let record = f.store + "/" + FileClockMarkStore.recordFileName
    switch damage {
    case .emptied:
      try Data().write(to: URL(fileURLWithPath: record))
    case .slotByteFlipped:
      try f.flip(FileClockMarkStore.recordFileName, at: 40)
    case .replacedByADirectory:
      try FileManager.default.removeItem(atPath: record)
      try FileManager.default.createDirectory(atPath: record, withIntermediateDirectories: false)
    }
    let decision = try f.gate().checkEligibility()
    #expect(decision.status == .expired)
    let markError = try #require(decision.markError, "\(damage): the mark's failure is named")
    let expected = EligibilityReasons.sealing(markError.code) ?? .markUnreadable
    #expect(decision.reasons == expected, "\(damage): \(decision.reasons), \(markError)")
    #expect(decision.cacheError == nil, "\(damage): \(String(describing: decision.cacheError))")
  }

  /// The store re-sealed with another key between a reader's open and its read: the read's
  /// refusal is `seal_mismatch`, as a new open's is, not `mark_unreadable`.
  @Test func aStoreResealedUnderAReaderIsASealMismatch() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "first"])
    guard case .opened(let reader) = try f.gate().openOffline() else {
      Issue.record("the sealed store did not open")
      return
    }
    f.clock.advance(by: .seconds(5))
    try f.signIn(["token": "second"], gate: try f.gate(keyPath: f.root.path + "/other-key"))
    let token = try CacheItemKey("token")
    #expect(throws: OfflineReadError.self) { _ = try reader.item(forKey: token) }
    do {
      _ = try reader.item(forKey: token)
    } catch {
      #expect(error.reasons == .sealMismatch, "\(error.reasons): \(error.reason)")
      #expect(error.storeError?.code == .sealMismatch)
    }
    do {
      _ = try reader.keys()
    } catch {
      #expect(error.reasons == .sealMismatch, "keys: \(error.reasons)")
    }
    // A new open says the same.
    guard case .refused(let decision) = try f.gate().openOffline() else {
      Issue.record("a store sealed with another key opened")
      return
    }
    #expect(decision.reasons.contains(.sealMismatch))
  }

  /// A sign-in that commits between a decision and its verify: the verify checks the new set
  /// against the new set's decision, and finds nothing wrong with a healthy store (it used to
  /// read the new items unbound and call them dated after the old decision's time).
  @Test(arguments: [true, false])
  func aVerifyThatMeetsANewerSignInChecksThatSignInsSet(_ sealed: Bool) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let gate = try f.gate(sealed: sealed)
    try f.signIn(["a": "1", "b": "2"], gate: gate)
    let decision = gate.checkEligibility()
    #expect(decision.isFresh)
    f.clock.advance(by: .seconds(30))
    try f.signIn(["a": "3", "b": "4", "c": "5"], gate: gate)
    let verification = gate.verifyItems(against: decision)
    #expect(verification.disagreeing.isEmpty, "\(verification.disagreeing)")
    #expect(verification.checked == 3)
    #expect(verification.decision.isFresh)
    #expect(verification.decision.generation == (decision.generation ?? 0) + 1)
    // Without a newer sign-in the decision given is the one verified against.
    let again = gate.verifyItems(against: verification.decision)
    #expect(again.decision == verification.decision)
    #expect(again.disagreeing.isEmpty && again.checked == 3)
  }

  /// A verify still finds an item that disagrees with its own set's decision after a newer
  /// sign-in: an old copy put in place of a new item is dated before the set's oldest item.
  @Test func aVerifyAfterANewerSignInStillFindsAnOldCopyPutBack() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let gate = try f.gate(sealed: false)
    try f.signIn(["token": "old", "b": "b"], gate: gate)
    let decision = gate.checkEligibility()
    let old = try f.bytes("cache/items/token")
    f.clock.advance(by: .seconds(60))
    try f.signIn(["token": "new", "b": "b2"], gate: gate)
    let path = f.store + "/cache/items/token"
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: old)
    try handle.close()
    let verification = gate.verifyItems(against: decision)
    #expect(verification.decision.generation == (decision.generation ?? 0) + 1)
    #expect(verification.disagreeing.map(\.key?.rawValue) == ["token"])
    #expect(verification.disagreeing.map(\.code) == ["too_old"])
  }
}
