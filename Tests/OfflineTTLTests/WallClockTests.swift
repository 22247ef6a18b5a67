import Foundation
import OfflineTTL
import Testing

@Suite struct WallClockTests {
  func read(_ clock: some WallClock) -> WallClockInstant { clock.now() }

  @Test func systemClockReadsTheRealWallClockInNanoseconds() throws {
    let before = try WallClockInstant(Date())
    let now = read(.system)
    let after = try WallClockInstant(Date())
    // Date keeps about a microsecond; allow that much either side.
    #expect(now.nanosecondsSinceEpoch >= before.nanosecondsSinceEpoch - 1_000)
    #expect(now.nanosecondsSinceEpoch <= after.nanosecondsSinceEpoch + 1_000)
  }
}
