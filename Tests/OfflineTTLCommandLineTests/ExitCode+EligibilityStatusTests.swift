import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

@Suite struct ExitCodeEligibilityStatusTests {
  @Test func eachStatusHasItsDocumentedExitStatus() {
    #expect(ExitCode(EligibilityStatus.fresh).rawValue == 0)
    #expect(ExitCode(EligibilityStatus.expired).rawValue == 1)
    #expect(ExitCode(EligibilityStatus.unavailable).rawValue == 2)
  }
}
