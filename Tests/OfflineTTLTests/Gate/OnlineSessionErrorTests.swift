import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct OnlineSessionErrorTests {
  @Test func carriesTheStoreErrorThatCausedIt() throws {
    let f = try GateFixture()
    f.marks.failNext(.reset, with: ClockMarkStoreError(code: .lockFailed, reason: "busy"))
    do {
      _ = try f.gate.beginOnlineSession()
      Issue.record("began over a failed reset")
    } catch {
      #expect(error.code == .markStoreFailed)
      #expect(error.markError?.code == .lockFailed)
      #expect(error.cacheError == nil)
      #expect(error.description == "mark_store_failed: lock_failed: busy")
    }
  }

  @Test func supersededNamesBothGenerations() throws {
    let f = try GateFixture()
    let old = try f.gate.beginOnlineSession()
    _ = try f.gate.beginOnlineSession()
    do {
      try old.delete(GateFixture.key("k"))
      Issue.record("a superseded session deleted")
    } catch {
      #expect(error.code == .superseded)
      #expect(error.reason.contains("generation 2"))
      #expect(error.reason.contains("generation 1"))
    }
  }
}
