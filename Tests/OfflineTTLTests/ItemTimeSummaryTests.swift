import OfflineTTL
import Testing

@Suite struct ItemTimeSummaryTests {
  func at(_ nanoseconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
  }

  @Test func onePassFindsCountOldestAndNewest() {
    let summary = ItemTimeSummary(writtenAt: [at(5), at(-3), at(9), at(0)])
    #expect(summary.count == 4)
    #expect(summary.oldest == at(-3))
    #expect(summary.newest == at(9))
    #expect(ItemTimeSummary(writtenAt: [WallClockInstant]()) == .empty)
  }

  @Test func addingWidensTheBounds() {
    let summary = ItemTimeSummary.empty.adding(at(4)).adding(at(1)).adding(at(2))
    #expect(summary == ItemTimeSummary(writtenAt: [at(4), at(1), at(2)]))
  }

  @Test func knownBoundsAreChecked() throws {
    #expect(throws: InvalidValueError.self) {
      try ItemTimeSummary(count: 0, oldest: at(1), newest: at(1))
    }
    #expect(throws: InvalidValueError.self) {
      try ItemTimeSummary(count: 2, oldest: at(2), newest: at(1))
    }
    #expect(try ItemTimeSummary(count: 2, oldest: at(1), newest: at(2)).count == 2)
  }
}
