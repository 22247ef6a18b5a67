import OfflineTTL
import Testing

@Suite struct ClockMarkRecordTests {
  let boot = BootID(high: 3, low: 3)
  let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  func signedIn() -> ClockMarkRecord {
    .afterOnlineSignIn(
      generation: 1,
      at: ClockObservation(wall: start, boot: BootClockReading(bootID: boot, sinceBoot: .zero)))
  }

  @Test func heldWallClockStillWritesWhenTheFloorRisesByTheResolution() {
    let record = signedIn()
    let small = record.observing(
      ClockObservation(
        wall: start, boot: BootClockReading(bootID: boot, sinceBoot: .milliseconds(999))))
    #expect(!record.needsWrite(becoming: small, resolution: .seconds(1)))
    let enough = record.observing(
      ClockObservation(wall: start, boot: BootClockReading(bootID: boot, sinceBoot: .seconds(1))))
    #expect(record.needsWrite(becoming: enough, resolution: .seconds(1)))
  }

  @Test func rebootAndLostTrustAlwaysWrite() {
    let record = signedIn()
    let other = BootClockReading(bootID: BootID(high: 4, low: 4), sinceBoot: .zero)
    #expect(
      record.needsWrite(
        becoming: record.observing(ClockObservation(wall: start, boot: other)),
        resolution: .seconds(1)))
    var untrusted = record
    untrusted.floor.isUntrusted = true
    #expect(record.needsWrite(becoming: untrusted, resolution: .seconds(1)))
  }

  @Test func markRiseBelowTheResolutionIsSkippedAndZeroResolutionAlwaysWrites() {
    let record = signedIn()
    let next = record.observing(
      ClockObservation(wall: start.saturatingAdvanced(by: .milliseconds(10))))
    #expect(!record.needsWrite(becoming: next, resolution: .seconds(1)))
    #expect(record.needsWrite(becoming: next, resolution: .zero))
    #expect(record.needsWrite(becoming: record, resolution: .zero))
  }
}
