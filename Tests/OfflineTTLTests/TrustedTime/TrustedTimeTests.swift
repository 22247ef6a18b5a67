import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct TrustedTimeTests {
  let server = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  let bootA = BootID(high: 1, low: 1)
  let bootB = BootID(high: 2, low: 2)
  let identity = TPMIdentity(1, 2, 3, 4)

  func anchor(uncertainty: Duration = .seconds(1), boot: ManualBootClock?, tpm: ManualTPMClock?)
    throws -> TrustedTime
  {
    .anchored(
      try TrustedTimeAnchor(
        serverTime: server, uncertainty: uncertainty, boot: boot?.now(), tpm: try tpm?.now()))
  }

  @Test func atTheAnchorTrustedTimeIsServerLessUncertaintyAndTwoSeconds() throws {
    let trusted = try anchor(
      boot: ManualBootClock(bootID: bootA, sinceBoot: .seconds(50)), tpm: nil)
    #expect(trusted.isAnchored)
    #expect(trusted.allowance == .seconds(2))
    #expect(trusted.effectiveNow == server.saturatingAdvanced(by: .seconds(-3)))
  }

  @Test func theBootClockCarriesItWithinABoot() throws {
    let boot = ManualBootClock(bootID: bootA, sinceBoot: .seconds(50))
    var trusted = try anchor(boot: boot, tpm: nil)
    boot.advance(by: .seconds(86_400))
    let step = try trusted.advanced(boot: boot.now(), tpm: nil)
    trusted = step.next
    #expect(step.carriedBy == .bootClock)
    #expect(step.elapsed == .seconds(86_400))
    // server + 1 day − 1 s uncertainty − (2 s + 500 ppm × 1 day = 43.2 s)
    #expect(
      trusted.effectiveNow
        == server.saturatingAdvanced(by: .seconds(86_400) - .seconds(1) - .milliseconds(45_200)))
  }

  @Test func aRebootWithoutATPMBreaksTheAnchorAndKeepsTheLowerBound() throws {
    let boot = ManualBootClock(bootID: bootA, sinceBoot: .seconds(50))
    let trusted = try anchor(boot: boot, tpm: nil)
    boot.advance(by: .seconds(600))
    let carried = try trusted.advanced(boot: boot.now(), tpm: nil).next
    boot.reboot(into: bootB, uptime: .seconds(30))
    let step = try carried.advanced(boot: boot.now(), tpm: nil)
    #expect(step.brokeAnchor)
    #expect(step.carriedBy == nil)
    #expect(step.next.effectiveNow == nil)
    #expect(step.next.lowerBound == carried.lowerBound)
  }

  @Test func aBootClockGoingBackWithoutATPMBreaksTheAnchor() throws {
    let boot = ManualBootClock(bootID: bootA, sinceBoot: .seconds(500))
    let trusted = try anchor(boot: boot, tpm: nil)
    boot.moveBack(by: .seconds(100))
    #expect(try trusted.advanced(boot: boot.now(), tpm: nil).brokeAnchor)
  }

  @Test func theTPMCarriesItAcrossAReboot() throws {
    let boot = ManualBootClock(bootID: bootA, sinceBoot: .seconds(50))
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(1_000))
    let trusted = try anchor(uncertainty: .zero, boot: boot, tpm: tpm)
    tpm.advance(by: .seconds(3_600))
    tpm.orderlyRestart()
    boot.reboot(into: bootB, uptime: .seconds(20))
    tpm.advance(by: .seconds(20))
    let step = try trusted.advanced(boot: boot.now(), tpm: try tpm.now())
    #expect(!step.brokeAnchor)
    #expect(step.carriedBy == .tpmClock)
    #expect(step.elapsed == .seconds(3_620))
    #expect(step.next.lowerBound == server.saturatingAdvanced(by: .seconds(3_620)))
  }

  @Test func withBothClocksTheLargerElapsedWins() throws {
    let boot = ManualBootClock(bootID: bootA, sinceBoot: .seconds(50))
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(1_000))
    let trusted = try anchor(boot: boot, tpm: tpm)
    // Suspended for an hour: the boot clock counts it, the TPM clock does not.
    boot.advance(by: .seconds(3_660))
    tpm.advance(by: .seconds(60))
    let step = try trusted.advanced(boot: boot.now(), tpm: try tpm.now())
    #expect(step.carriedBy == .bootClock)
    #expect(step.elapsed == .seconds(3_660))
  }

  @Test func aPowerLossAddsTheAllowanceAndSaysSo() throws {
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(1_000))
    let trusted = try anchor(uncertainty: .zero, boot: nil, tpm: tpm)
    tpm.advance(by: .seconds(60))
    tpm.powerLoss(fallBack: .seconds(45))
    let step = try trusted.advanced(boot: nil, tpm: try tpm.now())
    #expect(step.appliedPowerLossAllowance)
    #expect(step.elapsed == .seconds(15) + TPMClockStep.nvUpdateInterval)
    #expect(!step.brokeAnchor)
  }

  @Test func aClearedTPMIsRefused() throws {
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(1_000))
    let trusted = try anchor(boot: nil, tpm: tpm)
    tpm.clear(newIdentity: TPMIdentity(7, 7, 7, 7))
    #expect(throws: TPMClockError.self) { try trusted.advanced(boot: nil, tpm: try tpm.now()) }
  }

  @Test func aNegativeUncertaintyIsRejected() {
    #expect(throws: InvalidValueError.self) {
      try TrustedTimeAnchor(serverTime: server, uncertainty: .seconds(-1), boot: nil, tpm: nil)
    }
  }

  @Test func extremeValuesSaturate() throws {
    let tpm = ManualTPMClock(identity: identity, clock: .zero)
    let trusted = TrustedTime.anchored(
      try TrustedTimeAnchor(
        serverTime: .max, uncertainty: .zero, boot: nil, tpm: try tpm.now()))
    tpm.set(
      TPMClockReading(
        identity: identity, clockMilliseconds: .max, resetCount: 1, restartCount: 0, isSafe: true))
    let step = try trusted.advanced(boot: nil, tpm: try tpm.now())
    #expect(step.next.lowerBound == .max)
    let low = TrustedTime.anchored(
      try TrustedTimeAnchor(serverTime: .min, uncertainty: .seconds(10), boot: nil, tpm: nil))
    #expect(low.lowerBound == .min)
    #expect(low.effectiveNow == .min)
  }
}
