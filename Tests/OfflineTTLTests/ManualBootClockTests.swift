import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct ManualBootClockTests {
  @Test func advancesMovesBackRebootsAndCanBeUnavailable() {
    let first = BootID(high: 7, low: 7)
    let clock = ManualBootClock(bootID: first, sinceBoot: .seconds(10))
    clock.advance(by: .seconds(5))
    #expect(clock.now() == BootClockReading(bootID: first, sinceBoot: .seconds(15)))
    clock.moveBack(by: .seconds(20))
    #expect(clock.now()?.sinceBoot == .seconds(-5))
    let second = BootID(high: 8, low: 8)
    clock.reboot(into: second, uptime: .seconds(600))
    #expect(clock.now() == BootClockReading(bootID: second, sinceBoot: .seconds(600)))
    clock.makeUnavailable()
    #expect(clock.now() == nil)
    clock.advance(by: .seconds(1))
    #expect(clock.now() == nil)
  }
}
