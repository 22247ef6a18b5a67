import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct TPMClockStepTests {
  let identity = TPMIdentity(1, 2, 3, 4)

  func reading(
    _ clock: UInt64, reset: UInt32 = 1, restart: UInt32 = 0, safe: Bool = true,
    identity: TPMIdentity? = nil
  ) -> TPMClockReading {
    TPMClockReading(
      identity: identity ?? self.identity, clockMilliseconds: clock, resetCount: reset,
      restartCount: restart, isSafe: safe)
  }

  @Test func sameCycleElapsedIsTheClockDifference() throws {
    let step = try TPMClockStep(from: reading(1_000), to: reading(61_000))
    #expect(step.elapsed == .seconds(60))
    #expect(!step.crossedReset)
    #expect(!step.appliedPowerLossAllowance)
  }

  @Test func orderlyRebootCarriesTheClock() throws {
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(5))
    let before = try tpm.now()
    tpm.advance(by: .seconds(600))
    tpm.orderlyRestart()
    let step = try TPMClockStep(from: before, to: try tpm.now())
    #expect(step.elapsed == .seconds(600))
    #expect(step.crossedReset)
    #expect(!step.appliedPowerLossAllowance)
  }

  @Test(arguments: [Duration.zero, .seconds(30), .milliseconds(1 << 22)])
  func powerLossWithinTheIntervalAddsTheAllowance(fallBack: Duration) throws {
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(7_200))
    let before = try tpm.now()
    tpm.powerLoss(fallBack: fallBack)
    let step = try TPMClockStep(from: before, to: try tpm.now())
    #expect(step.appliedPowerLossAllowance)
    #expect(step.elapsed == TPMClockStep.nvUpdateInterval)
  }

  @Test func powerLossAfterTimePassedCountsTimeAndAllowance() throws {
    let step = try TPMClockStep(from: reading(10_000), to: reading(70_000, reset: 2, safe: false))
    #expect(step.elapsed == .seconds(60) + TPMClockStep.nvUpdateInterval)
  }

  @Test func clockBackBeyondTheIntervalIsAChangedTPM() {
    let limit = UInt64(1) << 22
    #expect(throws: TPMClockError.self) {
      try TPMClockStep(
        from: reading(limit + 10_001), to: reading(10_000, reset: 2, safe: false))
    }
    // Exactly the interval back is still a power loss.
    #expect(
      (try? TPMClockStep(from: reading(limit + 10_000), to: reading(10_000, reset: 2, safe: false)))
        != nil)
  }

  @Test func changedIdentityCountersOrClockAreTPMChanged() {
    let cases: [(TPMClockReading, TPMClockReading)] = [
      (reading(1_000), reading(2_000, identity: TPMIdentity(9, 9, 9, 9))),
      (reading(1_000, reset: 3), reading(2_000, reset: 2)),
      (reading(1_000, restart: 2), reading(2_000, restart: 1)),
      (reading(2_000), reading(1_000)),
      (reading(2_000), reading(1_000, reset: 2, safe: true)),
    ]
    for (recorded, now) in cases {
      #expect(throws: TPMClockError.self) { try TPMClockStep(from: recorded, to: now) }
      do throws(TPMClockError) {
        _ = try TPMClockStep(from: recorded, to: now)
      } catch {
        #expect(error.code == .tpmChanged)
        #expect(error.description.hasPrefix("tpm_changed: "))
      }
    }
  }

  @Test func clearedTPMIsChanged() throws {
    let tpm = ManualTPMClock(identity: identity, clock: .seconds(100))
    let before = try tpm.now()
    tpm.clear(newIdentity: TPMIdentity(5, 6, 7, 8))
    #expect(throws: TPMClockError.self) { try TPMClockStep(from: before, to: try tpm.now()) }
  }

  @Test func extremeClocksSaturate() throws {
    let step = try TPMClockStep(from: reading(0), to: reading(.max, reset: 2, safe: false))
    #expect(step.elapsed == .milliseconds(Int64.max))
  }
}
