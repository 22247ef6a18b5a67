import OfflineTTL
import Testing

@Suite struct EligibilityReasonsTests {
  @Test func codesAreFixedAndInTheListingOrder() {
    #expect(
      EligibilityReasons.allCases.map(\.code) == [
        "clock_behind_mark", "item_from_future", "too_old", "mark_missing", "mark_unreadable",
        "mark_not_persisted", "item_unreadable", "clock_behind_elapsed_time",
        "boot_clock_inconsistent", "tpm_unavailable", "tpm_changed", "boot_clock_unavailable",
        "key_unavailable", "key_required", "seal_mismatch",
      ])
    let all = EligibilityReasons.allCases.reduce(into: EligibilityReasons()) {
      $0.insert($1.reason)
    }
    #expect(all.codes == EligibilityReasons.allCases.map(\.code))
    #expect(Set(EligibilityReasons.allCases.map(\.reason.rawValue)).count == 15)
  }

  @Test func orderDoesNotDependOnInsertionOrder() {
    let reasons: EligibilityReasons = [.tooOld, .clockBehindMark]
    #expect(reasons.description == "clock_behind_mark,too_old")
    #expect(EligibilityReasons().description == "")
  }

  @Test func codesRoundTrip() {
    for (reason, code) in EligibilityReasons.allCases {
      #expect(EligibilityReasons(code: code) == reason)
    }
    #expect(EligibilityReasons(code: "nope") == nil)
  }
}
