#if TPM
  import OfflineTTL
  import OfflineTTLTPM
  import OfflineTTLTesting
  import Testing

  /// The ESYS clock against a real software TPM (swtpm), started per test.
  @Suite(
    .enabled(if: SwtpmProcess.isAvailable, "needs swtpm and tpm2-tools (swtpm, tpm2_shutdown)"))
  struct ESYSTPMClockTests {
    @Test func readsAdvancingClockAndAStableIdentity() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let clock = try ESYSTPMClock(tcti: swtpm.tcti)
      let first = try clock.now()
      let second = try ESYSTPMClock(tcti: swtpm.tcti).now()
      #expect(first.identity != .none)
      #expect(first.identity == second.identity)
      #expect(second.clockMilliseconds >= first.clockMilliseconds)
      #expect(first.isSafe)
    }

    @Test func orderlyRestartContinuesTheClock() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let clock = try ESYSTPMClock(tcti: swtpm.tcti)
      let before = try clock.now()
      try swtpm.orderlyRestart()
      let after = try clock.now()  // the broken connection is reopened once
      let step = try TPMClockStep(from: before, to: after)
      #expect(step.crossedReset)
      #expect(!step.appliedPowerLossAllowance)
      #expect(after.isSafe)
    }

    @Test func powerLossReadsUnsafeAndTheAllowanceApplies() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let clock = try ESYSTPMClock(tcti: swtpm.tcti)
      let before = try clock.now()
      try swtpm.powerLoss()
      let after = try clock.now()
      #expect(!after.isSafe)
      let step = try TPMClockStep(from: before, to: after)
      #expect(step.appliedPowerLossAllowance)
    }

    @Test func aClearedTPMHasAnotherIdentity() throws {
      let swtpm = try SwtpmProcess()
      defer { swtpm.stop() }
      let before = try ESYSTPMClock(tcti: swtpm.tcti).now()
      try swtpm.clear()
      let after = try ESYSTPMClock(tcti: swtpm.tcti).now()
      #expect(after.identity != before.identity)
      #expect(throws: TPMClockError.self) { try TPMClockStep(from: before, to: after) }
    }

    @Test func aNewStateIsAnotherTPM() throws {
      let first = try SwtpmProcess()
      defer { first.stop() }
      let second = try SwtpmProcess()
      defer { second.stop() }
      #expect(
        try ESYSTPMClock(tcti: first.tcti).now().identity
          != ESYSTPMClock(tcti: second.tcti).now().identity)
    }

    @Test func anUnreachableTPMIsUnavailable() throws {
      let swtpm = try SwtpmProcess()
      let tcti = swtpm.tcti
      swtpm.stop()
      let clock = try ESYSTPMClock(tcti: tcti)
      do throws(TPMClockError) {
        _ = try clock.now()
        Issue.record("a stopped TPM was read")
      } catch {
        #expect(error.code == .tpmUnavailable)
        #expect(error.description.contains(tcti))
      }
    }

    @Test(arguments: ["", "tpmrm0", "/dev/tpmrm0", "usb:x", "tpm:device"])
    func malformedConfigurationsAreRejected(tcti: String) {
      #expect(throws: InvalidValueError.self) { try ESYSTPMClock(tcti: tcti) }
    }
  }
#endif
