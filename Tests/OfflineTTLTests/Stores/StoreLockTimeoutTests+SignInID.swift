import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// The sign-in's read of the sign-in id the mark record holds (which staging is committed),
/// behind a mark lock held after the stored generation was read.
extension StoreLockTimeoutTests {
  /// A committed sign-in's staging (its roll forward failed) and a mark lock that another holder
  /// takes after the next sign-in read the generation. Unsealed, the item store reads the
  /// record's id as a reader does: it waits its own `lockTimeout`, not the 30 s default, then
  /// reads the record without the lock and finishes the committed staging. Sealed, the read
  /// throws `lock_timed_out` and the sign-in ends with nothing staged or removed (a record
  /// taken for absent would remove the committed staging and serve the items it replaced).
  @Test(arguments: [false, true])
  func aSignInWhoseReadOfTheCommittedIdTimesOutNeverRemovesTheCommittedStaging(sealed: Bool)
    throws
  {
    let fixture = try Fixture(sealed: sealed)
    defer { fixture.base.root.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.renameat, occurrence: nil, with: .ioError)
    let noRollForward = fixture.base.gate(
      cache: DirectoryCacheStore(
        atPath: fixture.base.store, faults: plan, sealing: fixture.base.provider))
    _ = try noRollForward.beginOnlineSession(writing: [(CacheItemKey("token"), Data("new".utf8))])
    let committed = try fixture.snapshot()
    #expect(committed.keys.contains { $0.hasPrefix("cache/next-2/") }, "\(committed.keys)")
    #expect(try fixture.cache().staleStagings() == [])

    let held = try HeldFileLock(fixture.markLock)
    var commitPoints = 0
    let (result, waited) = Self.timed {
      Result { () throws(StoreError) -> Bool in
        try fixture.cache().commitSignIn(
          CacheChanges(), storedGeneration: { 2 },
          commitPoint: {
            commitPoints += 1
            return true
          })
      }
    }
    held.release()
    #expect(!held.wasReleasedByWatchdog)
    #expect(waited < Self.limit * 2 + Self.slack, "waited \(waited), not the store's limit")
    if sealed {
      #expect(throws: StoreError(code: .lockTimedOut, message: "")) { try result.get() }
      #expect(commitPoints == 0)
      #expect(try fixture.snapshot() == committed, "nothing staged, removed or reset")
    } else {
      #expect(try result.get())
      #expect(commitPoints == 1)
      let names = try FileManager.default.contentsOfDirectory(
        atPath: fixture.base.store + "/cache")
      #expect(!names.contains { $0.hasPrefix("next-") || $0 == "pending" }, "\(names)")
    }
    guard case .opened(let reader) = fixture.gate().openOffline() else {
      Issue.record("the committed sign-in's items are not served")
      return
    }
    #expect(try reader.item(forKey: "token")?.payload == Data("new".utf8), "not the replaced item")
  }
}
