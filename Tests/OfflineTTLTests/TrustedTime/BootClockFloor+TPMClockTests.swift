import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct BootClockFloorTPMClockTests {
  let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  let identity = TPMIdentity(1, 2, 3, 4)

  @Test func acrossARebootTheTPMAddsMoreThanTheUptime() throws {
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(100))
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(100))
    let floor = BootClockFloor.signIn(at: start, boot: boot.now())
    let recorded = try tpm.now()
    tpm.advance(by: .seconds(600))
    tpm.orderlyRestart()
    tpm.advance(by: .seconds(30))
    boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(30))
    let step = try TPMClockStep(from: recorded, to: try tpm.now())
    let advanced = floor.advanced(to: boot.now(), tpmStep: step)
    #expect(advanced.lowerBound == start.saturatingAdvanced(by: .seconds(630)))
    #expect(advanced.elapsedSinceSignIn == .seconds(630))
    // Without the TPM, only the uptime counts.
    #expect(floor.advanced(to: boot.now()).lowerBound == start.saturatingAdvanced(by: .seconds(30)))
  }

  /// After a power loss the floor counts only the TPM time proved to have passed, never the
  /// power-loss allowance (which ages trusted time): a floor ahead of real time would refuse a
  /// correct wall clock.
  @Test(arguments: [Duration.seconds(0), .seconds(200), .seconds(4_000)])
  func aPowerLossAddsNoAllowanceToTheFloor(fallBack: Duration) throws {
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(100))
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(100))
    let floor = BootClockFloor.signIn(at: start, boot: boot.now())
    let recorded = try tpm.now()
    tpm.advance(by: .seconds(600))
    tpm.powerLoss(fallBack: fallBack)
    boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(5))
    let step = try TPMClockStep(from: recorded, to: try tpm.now())
    #expect(step.appliedPowerLossAllowance)
    #expect(step.elapsed >= TPMClockStep.nvUpdateInterval)
    let proved = Swift.max(.seconds(600) - fallBack, .zero)
    #expect(step.provedElapsed == proved)
    let advanced = floor.advanced(to: boot.now(), tpmStep: step)
    #expect(advanced.lowerBound == start.saturatingAdvanced(by: Swift.max(proved, .seconds(5))))
  }

  @Test func withinABootTheBootClockStillCounts() throws {
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(100))
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(100))
    let floor = BootClockFloor.signIn(at: start, boot: boot.now())
    let recorded = try tpm.now()
    boot.advance(by: .seconds(900))
    tpm.advance(by: .seconds(100))
    let step = try TPMClockStep(from: recorded, to: try tpm.now())
    #expect(
      floor.advanced(to: boot.now(), tpmStep: step).lowerBound
        == start.saturatingAdvanced(by: .seconds(900)))
  }

  @Test func anUntrustedFloorIsNotRaisedByTheTPM() throws {
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(100))
    let floor = BootClockFloor.signIn(at: start, boot: boot.now())
    boot.moveBack(by: .seconds(10))
    let recorded = TPMClockReading(
      identity: identity, clockMilliseconds: 0, resetCount: 1, restartCount: 0, isSafe: true)
    var now = recorded
    now.clockMilliseconds = 60_000
    let advanced = floor.advanced(
      to: boot.now(), tpmStep: try TPMClockStep(from: recorded, to: now))
    #expect(advanced.isUntrusted)
    #expect(advanced.lowerBound == start)
  }
}
