import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct ManualTPMClockTests {
  @Test func lifeCycle() throws {
    let tpm = ManualTPMClock(identity: TPMIdentity(1, 1, 1, 1), clock: .seconds(1))
    #expect(try tpm.now().clockMilliseconds == 1_000)
    tpm.advance(by: .milliseconds(1_500))
    #expect(try tpm.now().clockMilliseconds == 2_500)
    tpm.orderlyRestart()
    #expect(try tpm.now().resetCount == 2)
    #expect(try tpm.now().isSafe)
    tpm.powerLoss(fallBack: .seconds(10))
    #expect(try tpm.now().clockMilliseconds == 0)
    #expect(try !tpm.now().isSafe)
    tpm.clear(newIdentity: TPMIdentity(2, 2, 2, 2))
    #expect(try tpm.now().identity == TPMIdentity(2, 2, 2, 2))
    #expect(try tpm.now().resetCount == 0)
    tpm.makeUnavailable()
    #expect(throws: TPMClockError.self) { try tpm.now() }
    tpm.makeUnavailable(nil)
    #expect(try tpm.now().clockMilliseconds == 0)
  }
}
