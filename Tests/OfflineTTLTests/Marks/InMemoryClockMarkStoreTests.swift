import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct InMemoryClockMarkStoreTests {
  func instant(_ seconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: seconds * 1_000_000_000)
  }

  @Test func observeOnAbsentThrowsAbsentAndCreatesNothing() {
    let store = InMemoryClockMarkStore()
    #expect(throws: ClockMarkStoreError.self) { _ = try store.observe(now: instant(5)) }
    #expect(store.stored == .absent)
    #expect(store.writeCount == 0)
  }

  @Test func observeAdvancesToTheMaximumAndNeverLowers() throws {
    let store = InMemoryClockMarkStore()
    _ = try store.resetAfterOnlineSignIn(now: instant(100))
    #expect(try store.observe(now: instant(150)).current.mark == instant(150))
    let back = try store.observe(now: instant(20))
    #expect(back.previous.mark == instant(150))
    #expect(back.current.mark == instant(150))
    #expect(try store.read().mark == instant(150))
    #expect(try store.read().generation == 1)
  }

  @Test func honoursTheMarkResolution() throws {
    let store = InMemoryClockMarkStore()
    _ = try store.resetAfterOnlineSignIn(now: instant(100))
    let small = try store.observe(
      ClockObservation(wall: instant(100).saturatingAdvanced(by: .milliseconds(500))),
      resolution: .seconds(1))
    #expect(!small.wrote)
    #expect(try store.read().mark == instant(100))
    let big = try store.observe(ClockObservation(wall: instant(102)), resolution: .seconds(1))
    #expect(big.wrote)
    #expect(try store.read().mark == instant(102))
  }

  @Test func resetLowersTheMarkAndBumpsTheGeneration() throws {
    let store = InMemoryClockMarkStore(.unreadable(.badChecksum))
    #expect(try store.resetAfterOnlineSignIn(now: instant(500)).generation == 1)
    let second = try store.resetAfterOnlineSignIn(now: instant(10))
    #expect(second.generation == 2)
    #expect(second.mark == instant(10))
  }

  @Test func createFirstMarkLeavesAnExistingRecordAlone() throws {
    let store = InMemoryClockMarkStore()
    #expect(try store.createFirstMark(now: instant(7)).generation == 0)
    #expect(try store.createFirstMark(now: instant(99)).mark == instant(7))
    let broken = InMemoryClockMarkStore(.unreadable(.truncated))
    #expect(throws: ClockMarkStoreError.self) { _ = try broken.createFirstMark(now: instant(1)) }
    #expect(broken.stored == .unreadable(.truncated))
  }

  @Test func injectedFailuresAreThrownAndLeaveTheRecord() throws {
    let store = InMemoryClockMarkStore()
    _ = try store.resetAfterOnlineSignIn(now: instant(100))
    let failure = ClockMarkStoreError(code: .writeFailed, errno: 28, reason: "disk full")
    store.failNext(.observeWrite, with: failure)
    #expect(throws: failure) { _ = try store.observe(now: instant(200)) }
    #expect(try store.read().mark == instant(100))
    #expect(try store.observe(now: instant(200)).current.mark == instant(200))
    store.setFailure(failure, for: .read)
    #expect(throws: failure) { _ = try store.read() }
    store.setFailure(nil, for: .read)
    #expect(try store.read().mark == instant(200))
  }
}
