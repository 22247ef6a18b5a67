import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct MarkHistoryTests {
  func event(
    _ reset: Bool, _ actor: Int, now: Int64, mark: Int64, generation: UInt64
  ) -> MarkHistory.Event {
    .init(
      isReset: reset, actor: actor, now: instant(now), mark: instant(mark), generation: generation)
  }

  func record(_ mark: Int64, _ generation: UInt64) -> ClockMarkRecord {
    ClockMarkRecord(
      generation: generation, mark: instant(mark),
      floor: .signIn(at: instant(0), boot: nil))
  }

  @Test func aConsistentHistoryHasNoViolations() {
    var history = MarkHistory()
    history.append(event(true, 9, now: 100, mark: 100, generation: 1))
    history.append(event(false, 0, now: 150, mark: 150, generation: 1))
    history.append(event(false, 1, now: 120, mark: 150, generation: 1))
    history.append(event(true, 9, now: 10, mark: 10, generation: 2))
    history.append(event(false, 0, now: 5, mark: 10, generation: 2))
    #expect(history.violations(final: record(10, 2)) == [])
  }

  @Test func aResetUndoneByAStaleWriterIsCaught() {
    var history = MarkHistory()
    history.append(event(true, 9, now: 100, mark: 100, generation: 1))
    history.append(event(false, 0, now: 150, mark: 150, generation: 1))
    history.append(event(true, 9, now: 10, mark: 10, generation: 2))
    // A writer that read generation 1 before the reset wrote it back.
    history.append(event(false, 1, now: 20, mark: 150, generation: 2))
    #expect(!history.violations(final: record(150, 2)).isEmpty)
    #expect(!history.violations(final: record(150, 1)).isEmpty)
  }

  @Test func aMarkGoingDownForOneActorIsCaught() {
    var history = MarkHistory()
    history.append(event(true, 9, now: 100, mark: 100, generation: 1))
    history.append(event(false, 0, now: 150, mark: 150, generation: 1))
    history.append(event(false, 0, now: 120, mark: 120, generation: 1))
    #expect(!history.violations(final: record(150, 1)).isEmpty)
  }

  @Test func aFinalMarkOtherThanTheMaximumIsCaught() {
    var history = MarkHistory()
    history.append(event(true, 9, now: 100, mark: 100, generation: 1))
    history.append(event(false, 0, now: 150, mark: 150, generation: 1))
    #expect(!history.violations(final: record(140, 1)).isEmpty)
  }
}
