// The names that the fragments of the article "Getting started" assume, so that
// Scripts/check-dependent-package.sh can compile them as a dependent package would.
import Foundation
import OfflineTTL

private let policy = try! EligibilityPolicy(maxAge: .seconds(7 * 86_400))
private let items: [CacheItem] = []
private let now = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
private let storedMark: WallClockInstant? = nil
private let dir = "/var/tmp/app-cache"
private let data = Data("token".utf8)
private func askForOnlineSignIn(because reasons: EligibilityReasons) {}
private let previous = ClockMarkRecord.afterOnlineSignIn(
  generation: 1, at: ClockObservation(wall: now))
private let bootClock: any BootClock = LinuxBootClock()
private let summary = ItemTimeSummary(writtenAt: [now])
