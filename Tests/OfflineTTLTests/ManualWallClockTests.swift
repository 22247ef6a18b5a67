import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct ManualWallClockTests {
  @Test func setAdvanceAndMoveBack() {
    let clock = ManualWallClock(WallClockInstant(nanosecondsSinceEpoch: 100))
    clock.advance(by: .nanoseconds(50))
    #expect(clock.now() == WallClockInstant(nanosecondsSinceEpoch: 150))
    clock.moveBack(by: .nanoseconds(200))
    #expect(clock.now() == WallClockInstant(nanosecondsSinceEpoch: -50))
    clock.set(.max)
    clock.advance(by: .seconds(1))
    #expect(clock.now() == .max)
    clock.set(.min)
    clock.moveBack(by: .seconds(1))
    #expect(clock.now() == .min)
  }
}

@Suite struct UnimplementedWallClockTests {
  @Test func readingItRecordsAnIssue() {
    withKnownIssue {
      _ = UnimplementedWallClock("probe").now()
    } matching: { issue in
      issue.description.contains("probe.now() was read")
    }
  }
}
