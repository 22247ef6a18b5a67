import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct OfflineReadErrorTests {
  @Test func eachRefusalMapsToItsEligibilityReasonAndDescribesItself() throws {
    let f = try GateFixture(maxAge: .seconds(60))
    try f.signIn()
    guard case .opened(let reader) = f.gate.openOffline() else {
      Issue.record("a fresh cache did not open")
      return
    }
    f.clock.advance(by: .seconds(61))
    do {
      _ = try reader.keys()
      Issue.record("read past the deadline")
    } catch {
      #expect(error.code == .deadlinePassed)
      #expect(error.eligibilityReason == .tooOld)
      #expect(error.description.hasPrefix("deadline_passed: the cache expired at its deadline"))
    }
  }
}
