import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// A staging put back where it does not belong is never made live (unsealed and sealed): each
/// staging is bound to its own sign-in by a random id that the mark reset records, and readers
/// and the next sign-in roll forward only the staging whose id the committed record holds. Every
/// member of the kind: a copy of a staging whose sign-in never committed (the same generation,
/// an older one, two killed sign-ins of one generation), a staging of another store, `pending`
/// or the staging alone, a mark record put back alone, and the records and stagings written
/// before sign-in ids existed.
@Suite struct StagingReplayTests {
  typealias Fixture = DirectoryGateFixture

  struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// The tester's scenario: a sign-in killed before its commit point leaves `next-2`; a copy of
  /// it (and of `pending`) is put back after a later sign-in committed generation 2. Checks,
  /// reads and the next sign-in serve the committed sign-in's items; the copy stays, unread,
  /// until that sign-in removes it.
  @Test(arguments: [false, true])
  func aCopyOfAStagingThatNeverCommittedIsNotRolledForward(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B"])
    try #require(try f.stagings() == ["next-2"])
    let saved = try f.save("next-2", "pending")
    try f.signIn(["token": "C"])
    #expect(try f.generation() == 2)
    #expect(try f.stagings().isEmpty)
    try f.putBack(saved)
    #expect(try f.stagings() == ["next-2"])
    let before = try f.cacheTree()
    try f.expectServed(token: "C")
    #expect(try f.cacheTree() == before, "an offline path changed the store")
    // The next sign-in (no items) removes the copy and keeps the committed items.
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    try f.expectServed(token: "C")
  }

  /// A copy of a staging of an older generation (the unsealed rule takes a staging of any
  /// generation up to the mark's): not rolled forward either.
  @Test(arguments: [false, true])
  func aCopyOfAnOlderGenerationsStagingIsNotRolledForward(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-older", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B"])
    let saved = try f.save("next-2", "pending")
    try f.signIn(["token": "C"])
    try f.signIn(["token": "D"])
    #expect(try f.generation() == 3)
    try f.putBack(saved)
    try f.expectServed(token: "D")
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    try f.expectServed(token: "D")
  }

  /// Two sign-ins killed in a row for the same generation, each copied: neither copy is rolled
  /// forward after the third sign-in committed that generation.
  @Test(arguments: [false, true])
  func copiesOfTwoKilledSignInsOfOneGenerationAreNotRolledForward(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-twice", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B1"])
    let first = try f.save("next-2", "pending")
    try f.signInThatNeverCommits(["token": "B2"])
    let second = try f.save("next-2", "pending")
    try f.signIn(["token": "C"])
    for saved in [first, second] {
      try f.putBack(saved)
      try f.expectServed(token: "C")
      _ = try f.gate().beginOnlineSession()
      #expect(try f.stagings().isEmpty)
      try f.expectServed(token: "C")
    }
  }

  /// A staging (and `pending`) copied from another store where a sign-in of the same generation
  /// never committed.
  @Test(arguments: [false, true])
  func aStagingFromAnotherStoreIsNotRolledForward(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-here", sealed: sealed)
    let other = try Fixture(prefix: "staging-replay-there", sealed: sealed)
    defer {
      f.root.remove()
      other.root.remove()
    }
    try f.signIn(["token": "A"])
    try f.signIn(["token": "C"])
    try other.signIn(["token": "X"])
    try other.signInThatNeverCommits(["token": "Y"])
    let saved = try other.save("next-2", "pending")
    try f.putBack(saved)
    try f.expectServed(token: "C")
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    try f.expectServed(token: "C")
  }

  /// `pending` alone, and a staging alone, put back: nothing but the committed items is served,
  /// nothing is written offline, and the next sign-in removes what was put back.
  @Test(arguments: [false, true], ["pending", "next-2"])
  func aMarkerOrAStagingAloneChangesNothing(sealed: Bool, part: String) throws {
    let f = try Fixture(prefix: "staging-replay-part", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B"])
    let saved = try f.save(part)
    try f.signIn(["token": "C"])
    try f.putBack(saved)
    let before = try f.cacheTree()
    try f.expectServed(token: "C")
    #expect(try f.cacheTree() == before, "an offline path changed the store")
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    #expect(!FileManager.default.fileExists(atPath: f.store + "/cache/pending"))
    try f.expectServed(token: "C")
  }

  /// A staging left by a sign-in that never committed, and a mark record of its generation put
  /// back alone (from another store, whose sign-in wrote another id): the staging is not rolled
  /// forward, by readers or by the next sign-in. (Sealed, the other store's record does not
  /// authenticate for this store's index; either way the killed sign-in's items are never
  /// served.)
  @Test(arguments: [false, true])
  func aMarkRecordPutBackAloneDoesNotCommitAStaging(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-mark", sealed: sealed)
    let other = try Fixture(prefix: "staging-replay-mark-other", sealed: sealed)
    defer {
      f.root.remove()
      other.root.remove()
    }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B"])
    try other.signIn(["token": "X"])
    try other.signIn(["token": "Y"])
    let record = try FileClockMarkStore(atPath: other.store, sealing: other.provider).read()
    #expect(record.generation == 2)
    #expect(record.signInID != nil)
    try f.replaceRecord(with: other.store + "/clock-mark")
    try f.expectNeverServed(token: "B")
    #expect(try f.stagings() == ["next-2"], "an offline path removed the staging")
    // The next sign-in removes the staging; B never becomes live.
    _ = try? f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    try f.expectNeverServed(token: "B")
  }

  /// The record format before sign-in ids (unsealed; crafted): a record without an id commits
  /// only a staging without one (written by that older version: its roll forward, interrupted
  /// by an upgrade, is finished), never a staging that carries an id.
  @Test func aRecordWithoutAnIdCommitsOnlyAStagingWithoutOne() throws {
    for legacyStaging in [false, true] {
      let f = try Fixture(prefix: "staging-replay-legacy")
      defer { f.root.remove() }
      try f.signIn(["token": "A"])
      try f.signInThatNeverCommits(["token": "B"])
      // What an older version's reset of generation 2 wrote: the same record, without an id.
      var record = try FileClockMarkStore(atPath: f.store).read()
      record.generation = 2
      record.signInID = nil
      try f.writeRecord(record)
      if legacyStaging {
        try FileManager.default.removeItem(atPath: f.store + "/cache/next-2/sign-in")
      }
      try f.expectServed(token: legacyStaging ? "B" : "A")
      _ = try f.gate().beginOnlineSession()
      #expect(try f.stagings().isEmpty)
      try f.expectServed(token: legacyStaging ? "B" : "A")
    }
  }

  /// The committed sign-in's own staging is still rolled forward: its reset recorded the id its
  /// staging carries, so when its roll forward fails after the commit point (every `renameat`
  /// fails), readers read its set through the staging and the next sign-in finishes it.
  @Test(arguments: [false, true])
  func theCommittedSignInsStagingIsRolledForward(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-own", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    let plan = SyscallFaultPlan()
    plan.fail(.renameat, occurrence: 1, with: .ioError)
    let failing = f.gate(
      cache: DirectoryCacheStore(atPath: f.store, faults: plan, sealing: f.provider))
    let session = try failing.beginOnlineSession(writing: [
      (CacheItemKey("token"), Data("B".utf8))
    ])
    #expect(session.unfinishedRollForward != nil, "the roll forward did not fail")
    let record = try FileClockMarkStore(atPath: f.store, sealing: f.provider).read()
    #expect(record.generation == 2)
    #expect(record.signInID != nil)
    #expect(try f.stagings() == ["next-2"])
    #expect(try DirectoryCacheStore(atPath: f.store, sealing: f.provider).staleStagings() == [])
    try f.expectServed(token: "B")
    _ = try f.gate().beginOnlineSession()
    #expect(try f.stagings().isEmpty)
    try f.expectServed(token: "B")
  }

  /// What a status report lists: the copy put back, and nothing once the next sign-in removed it.
  @Test(arguments: [false, true])
  func aPutBackCopyIsListedAsStale(sealed: Bool) throws {
    let f = try Fixture(prefix: "staging-replay-stale", sealed: sealed)
    defer { f.root.remove() }
    try f.signIn(["token": "A"])
    try f.signInThatNeverCommits(["token": "B"])
    let store = DirectoryCacheStore(atPath: f.store, sealing: f.provider)
    #expect(try store.staleStagings() == ["next-2"], "a killed sign-in's staging is stale")
    let saved = try f.save("next-2", "pending")
    try f.signIn(["token": "C"])
    #expect(try store.staleStagings() == [])
    try f.putBack(saved)
    #expect(try store.staleStagings() == ["next-2"])
    _ = try f.gate().beginOnlineSession()
    #expect(try store.staleStagings() == [])
  }
}

extension DirectoryGateFixture {
  /// The names in `cache/` that are stagings.
  fileprivate func stagings() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: store + "/cache")
      .filter { $0.hasPrefix("next-") }.sorted()
  }

  fileprivate func generation() throws -> UInt64 {
    try FileClockMarkStore(atPath: store, sealing: provider).read().generation
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

  /// Copies of `cache/<name>` for each name (a directory tree or a file), kept in memory with
  /// their modes (0700 directories, 0600 files, as the store writes them).
  fileprivate func save(_ names: String...) throws -> [(path: String, data: Data?)] {
    var saved: [(path: String, data: Data?)] = []
    let base = store + "/cache/"
    for name in names {
      var isDirectory: ObjCBool = false
      try #require(FileManager.default.fileExists(atPath: base + name, isDirectory: &isDirectory))
      guard isDirectory.boolValue else {
        saved.append((name, try Data(contentsOf: URL(fileURLWithPath: base + name))))
        continue
      }
      saved.append((name, nil))
      for sub in try FileManager.default.subpathsOfDirectory(atPath: base + name).sorted() {
        let path = name + "/" + sub
        var subIsDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: base + path, isDirectory: &subIsDirectory)
        saved.append(
          (
            path,
            subIsDirectory.boolValue ? nil : try Data(contentsOf: URL(fileURLWithPath: base + path))
          ))
      }
    }
    return saved
  }

  /// Puts back what ``save(_:)`` copied (directories first, in the order saved).
  fileprivate func putBack(_ saved: [(path: String, data: Data?)]) throws {
    let base = store + "/cache/"
    for (path, data) in saved {
      if let data {
        try data.write(to: URL(fileURLWithPath: base + path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: base + path)
      } else {
        try FileManager.default.createDirectory(
          atPath: base + path, withIntermediateDirectories: false,
          attributes: [.posixPermissions: 0o700])
      }
    }
  }

  /// Replaces the mark record with a copy of `source` (mode 0600).
  fileprivate func replaceRecord(with source: String) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    try bytes.write(to: URL(fileURLWithPath: store + "/clock-mark"))
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o600], ofItemAtPath: store + "/clock-mark")
  }

  /// Writes `record` as the whole record file (unsealed).
  fileprivate func writeRecord(_ record: ClockMarkRecord) throws {
    let bytes = MarkRecordCodec.encodeFile(record, sequence: 100)
    try Data(bytes).write(to: URL(fileURLWithPath: store + "/clock-mark"))
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o600], ofItemAtPath: store + "/clock-mark")
  }

  /// The check is fresh, and the opened reader, the key listing and the item store's reads of
  /// the record's generation all serve `token` = `expected` and nothing else.
  fileprivate func expectServed(
    token expected: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    #expect(gate().checkEligibility().isFresh, sourceLocation: sourceLocation)
    guard case .opened(let reader) = gate().openOffline() else {
      throw StagingReplayTests.Failure("the store was not fresh")
    }
    #expect(
      try reader.item(forKey: "token")?.payload == Data(expected.utf8),
      sourceLocation: sourceLocation)
    #expect(try reader.keys().map(\.rawValue) == ["token"], sourceLocation: sourceLocation)
    let cache = DirectoryCacheStore(atPath: store, sealing: provider)
    let current = try generation()
    #expect(
      try cache.item(forKey: "token", generation: current)?.payload == Data(expected.utf8),
      sourceLocation: sourceLocation)
    #expect(
      try cache.keys(forGeneration: current).map(\.rawValue) == ["token"],
      sourceLocation: sourceLocation)
  }

  /// Whatever the store answers (it may refuse), `token` is never served as `payload`.
  fileprivate func expectNeverServed(
    token payload: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    if case .opened(let reader) = gate().openOffline() {
      #expect(
        (try? reader.item(forKey: "token"))??.payload != Data(payload.utf8),
        sourceLocation: sourceLocation)
    }
    let cache = DirectoryCacheStore(atPath: store, sealing: provider)
    if let generation = try? FileClockMarkStore(atPath: store, sealing: provider).read()
      .generation
    {
      #expect(
        (try? cache.item(forKey: "token", generation: generation))??.payload
          != Data(payload.utf8), sourceLocation: sourceLocation)
    }
  }
}
