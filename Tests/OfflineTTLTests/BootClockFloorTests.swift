import OfflineTTL
import Testing

@Suite struct BootClockFloorTests {
  let bootA = BootID(high: 1, low: 1)
  let bootB = BootID(high: 2, low: 2)
  let signInWall = WallClockInstant(nanosecondsSinceEpoch: 1_000_000_000_000)

  func reading(_ id: BootID, _ nanoseconds: Int64) -> BootClockReading {
    BootClockReading(bootID: id, sinceBoot: .nanoseconds(nanoseconds))
  }

  @Test func sameBootAddsTheBootClockDelta() {
    let floor = BootClockFloor.signIn(at: signInWall, boot: reading(bootA, 500))
      .advanced(to: reading(bootA, 800))
    #expect(floor.lowerBound.nanosecondsSinceEpoch == 1_000_000_000_300)
    #expect(floor.anchorSinceBoot == .nanoseconds(800))
    #expect(floor.elapsedSinceSignIn == .nanoseconds(300))
    #expect(!floor.isUntrusted)
  }

  @Test func anotherBootAddsTheWholeUptime() {
    let floor = BootClockFloor.signIn(at: signInWall, boot: reading(bootA, 500))
      .advanced(to: reading(bootA, 900))
      .advanced(to: reading(bootB, 70))
    #expect(floor.lowerBound.nanosecondsSinceEpoch == 1_000_000_000_470)
    #expect(floor.anchorBootID == bootB)
    #expect(floor.elapsedSinceSignIn == .nanoseconds(470))
  }

  @Test func backwardOnTheSameBootIsUntrustedAndSticks() {
    let untrusted = BootClockFloor.signIn(at: signInWall, boot: reading(bootA, 500))
      .advanced(to: reading(bootA, 499))
    #expect(untrusted.isUntrusted)
    #expect(untrusted.lowerBound == signInWall)
    let later = untrusted.advanced(to: reading(bootA, 10_000))
    #expect(later == untrusted)
  }

  @Test func negativeReadingIsUntrusted() {
    let floor = BootClockFloor.signIn(at: signInWall, boot: reading(bootA, 500))
      .advanced(to: reading(bootB, -1))
    #expect(floor.isUntrusted)
  }

  @Test func missingOrAnonymousReadingsChangeNothing() {
    let floor = BootClockFloor.signIn(at: signInWall, boot: reading(bootA, 500))
    #expect(floor.advanced(to: nil) == floor)
    #expect(floor.advanced(to: reading(.none, 9_000)) == floor)
  }

  @Test func signInWithoutAUsableReadingIsUnanchoredAndNeverAdvances() {
    for boot in [nil, reading(.none, 5), reading(bootA, -5)] {
      let floor = BootClockFloor.signIn(at: signInWall, boot: boot)
      #expect(!floor.isAnchored)
      #expect(floor.advanced(to: reading(bootA, 1_000_000)) == floor)
    }
  }

  @Test func extremeValuesSaturateInsteadOfTrapping() {
    let floor = BootClockFloor(
      lowerBound: WallClockInstant(nanosecondsSinceEpoch: .max - 10), anchorBootID: bootA,
      anchorSinceBoot: .nanoseconds(Int64.min), elapsedSinceSignIn: .seconds(Int64.max),
      isUntrusted: false)
    let next = floor.advanced(to: BootClockReading(bootID: bootA, sinceBoot: .seconds(Int64.max)))
    #expect(next.lowerBound == .max)
    #expect(next.elapsedSinceSignIn == .nanoseconds(Int64.max))
    #expect(next.anchorSinceBoot == .nanoseconds(Int64.max))
  }
}
