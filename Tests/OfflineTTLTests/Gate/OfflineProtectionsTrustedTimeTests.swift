import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// Trusted time is the third rule of the one decision: the decision names the server anchor
/// (`holding`, `none`, `lost`) and the TPM clock (`in_use`, `not_configured`, `unavailable`), and
/// the boot-clock floor reads `superseded` while the anchor decides.
@Suite struct OfflineProtectionsTrustedTimeTests {
  struct Device {
    let wall = ManualWallClock(GateFixture.start)
    let boot = ManualBootClock(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(100))
    let tpm: ManualTPMClock?
    let marks = InMemoryClockMarkStore()
    let cache = InMemoryCacheStore()
    let gate: OfflineAccessGate

    init(tpm: Bool) throws {
      let tpmClock =
        tpm ? ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(9)) : nil
      self.tpm = tpmClock
      gate = OfflineAccessGate(
        cache: cache, marks: marks, policy: try EligibilityPolicy(maxAge: .seconds(3_600)),
        clock: wall, bootClock: boot, tpmClock: tpmClock)
    }

    func run(_ duration: Duration) {
      wall.advance(by: duration)
      boot.advance(by: duration)
      tpm?.advance(by: duration)
    }

    /// A sign-in anchored at a server time `serverAhead` ahead of the wall clock.
    func signInAnchored(serverAhead: Duration = .zero) throws {
      let session = try gate.beginOnlineSession(
        serverTime: wall.now().saturatingAdvanced(by: serverAhead), uncertainty: .zero)
      try session.write("token", Data("secret".utf8))
    }
  }

  @Test func withoutServerTimeOrTPMTheAnchorIsNoneAndTheTPMNotConfigured() throws {
    let device = try Device(tpm: false)
    try device.gate.beginOnlineSession().write("token", Data("x".utf8))
    let decision = device.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(
      decision.protections
        == OfflineProtections(
          markRule: .active, bootClockFloor: .active, serverAnchor: .none,
          tpmClock: .notConfigured))
  }

  @Test func aHoldingAnchorDecidesAndSupersedesTheFloor() throws {
    let device = try Device(tpm: false)
    // The wall clock is 10 minutes slow: trusted time, not the wall clock, decides.
    try device.signInAnchored(serverAhead: .seconds(600))
    device.run(.seconds(60))
    let decision = device.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.protections.serverAnchor == .holding)
    #expect(decision.protections.bootClockFloor == .superseded)
    #expect(decision.protections.tpmClock == .notConfigured)
    #expect(decision.floorCheck == nil)
    let trusted = try #require(decision.trustedTime?.trustedNow)
    #expect(decision.effectiveNow == trusted)
    #expect(decision.now == device.wall.now(), "now is the wall clock's reading")
    #expect(decision.now.duration(to: trusted) > .seconds(590))
  }

  @Test func aRebootWithoutATPMLosesTheAnchorAndTheFloorDecidesAgain() throws {
    let device = try Device(tpm: false)
    try device.signInAnchored()
    device.run(.seconds(60))
    #expect(device.gate.checkEligibility().protections.serverAnchor == .holding)
    device.boot.reboot(into: BootID(high: 6, low: 6), uptime: .seconds(30))
    device.wall.advance(by: .seconds(60))
    for attempt in 0..<2 {
      // Lost at the decision that broke it, and still lost once the broken anchor is stored.
      let decision = device.gate.checkEligibility()
      #expect(decision.protections.serverAnchor == .lost, "attempt \(attempt)")
      #expect(decision.protections.bootClockFloor == .active, "attempt \(attempt)")
      #expect(decision.trustedTime?.trustedNow == nil)
      #expect(decision.isFresh)
    }
    // A new anchored sign-in holds again.
    try device.signInAnchored()
    #expect(device.gate.checkEligibility().protections.serverAnchor == .holding)
  }

  @Test func aTPMThatAnswersIsInUse() throws {
    let device = try Device(tpm: true)
    try device.gate.beginOnlineSession().write("token", Data("x".utf8))
    device.run(.seconds(5))
    let decision = device.gate.checkEligibility()
    #expect(decision.isFresh)
    #expect(decision.protections.tpmClock == .inUse)
    #expect(decision.protections.serverAnchor == .none, "a TPM alone anchors no server time")
  }

  @Test func aTPMThatCannotBeReadIsUnavailableAndRefuses() throws {
    let device = try Device(tpm: true)
    try device.signInAnchored()
    device.tpm?.makeUnavailable()
    let decision = device.gate.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .tpmUnavailable)
    #expect(decision.protections.tpmClock == .unavailable)
  }

  @Test func aClearedTPMIsUnavailableTheAnchorLostAndTheReaderRefuses() throws {
    let device = try Device(tpm: true)
    try device.signInAnchored()
    guard case .opened(let reader) = device.gate.openOffline() else {
      Issue.record("a fresh cache did not open")
      return
    }
    #expect(try reader.item(forKey: "token") != nil)
    try #require(device.tpm).clear(newIdentity: TPMIdentity(9, 9, 9, 9))
    let decision = device.gate.checkEligibility()
    #expect(decision.reasons.contains(.tpmChanged))
    #expect(decision.protections.tpmClock == .unavailable)
    #expect(decision.protections.serverAnchor == .lost)
    #expect {
      try reader.item(forKey: "token")
    } throws: { error in
      guard let error = error as? OfflineReadError else { return false }
      return error.code == .tpmChanged && error.reasons.contains(.tpmChanged)
    }
  }
}
