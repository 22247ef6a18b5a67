import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// The eight trusted-time scenarios, on the library with manual clocks and a real file store
/// (so the record's format version 2 is written and read back).
@Suite struct TrustedTimeGateTests {
  static let trueStart = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let day = Duration.seconds(86_400)
  static let week = Duration.seconds(7 * 86_400)

  /// A device: wall, boot and (optionally) TPM clocks over a directory store.
  final class Device {
    let directory: TemporaryStoreDirectory
    let wall: ManualWallClock
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(100))
    let tpm: ManualTPMClock?
    /// True time, which the tests advance along with the clocks.
    var trueNow = TrustedTimeGateTests.trueStart

    init(wallOffset: Duration, tpm: Bool) throws {
      directory = try TemporaryStoreDirectory(prefix: "trusted")
      wall = ManualWallClock(TrustedTimeGateTests.trueStart.saturatingAdvanced(by: wallOffset))
      self.tpm = tpm ? ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(500)) : nil
    }

    deinit { directory.remove() }

    var gate: OfflineAccessGate {
      OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: directory.path),
        marks: FileClockMarkStore(atPath: directory.path),
        policy: try! EligibilityPolicy(maxAge: TrustedTimeGateTests.week),
        clock: wall, bootClock: boot, tpmClock: tpm)
    }

    /// Time passes while the device runs.
    func run(_ duration: Duration) {
      trueNow = trueNow.saturatingAdvanced(by: duration)
      wall.advance(by: duration)
      boot.advance(by: duration)
      tpm?.advance(by: duration)
    }

    /// Sign-in with the true time as server time, writing one item.
    @discardableResult
    func signIn(uncertainty: Duration = .milliseconds(200)) throws -> WallClockInstant {
      let session = try gate.beginOnlineSession(serverTime: trueNow, uncertainty: uncertainty)
      return try session.write(CacheItemKey("token"), Data("secret".utf8))
    }

    func check() -> OfflineAccessDecision { gate.checkEligibility() }
  }

  @Test func scenario1SlowClockAtSignInIsFreshAndExpiresByRealTime() throws {
    let device = try Device(wallOffset: .zero - Self.day * 30, tpm: false)
    let stamp = try device.signIn()
    // Items are stamped with trusted time, not the slow wall clock.
    #expect(device.trueNow.duration(to: stamp) < .zero)
    #expect(device.trueNow.duration(to: stamp) > .seconds(-3))
    device.run(.seconds(60))
    var decision = device.check()
    #expect(decision.status == .fresh)
    let offset = try #require(decision.trustedTime?.wallOffset)
    #expect(offset < .zero - Self.day * 29)
    // NTP corrects the clock: still fresh.
    device.wall.set(device.trueNow)
    decision = device.check()
    #expect(decision.status == .fresh)
    // A week of real time later (plus the drift allowance: 2 s + 500 ppm of a week = 304.4 s):
    // expired.
    device.run(Self.week + .seconds(400))
    decision = device.check()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .tooOld)
  }

  @Test func scenario2FastClockAtSignInThenCorrectedIsNotALockout() throws {
    let device = try Device(wallOffset: Self.day, tpm: false)
    try device.signIn()
    device.run(.seconds(60))
    #expect(device.check().status == .fresh)
    device.wall.set(device.trueNow)  // corrected
    let decision = device.check()
    #expect(decision.status == .fresh)
    #expect(decision.reasons.isEmpty)
    // Same real deadline: fresh just before a week of real time, expired after.
    device.run(Self.week - .seconds(120))
    #expect(device.check().status == .fresh)
    device.run(.seconds(520))  // past the deadline by more than the 304.4 s allowance
    #expect(device.check().reasons == .tooOld)
  }

  @Test func scenario3HeldOrSetBackWallClockExpiresAtTheRealDeadline() throws {
    let device = try Device(wallOffset: .zero, tpm: false)
    try device.signIn()
    let held = device.wall.now()
    device.run(Self.week + .seconds(400))
    device.wall.set(held.saturatingAdvanced(by: .zero - Self.day))  // held, then set back
    let decision = device.check()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .tooOld)
  }

  @Test func scenario4RebootWithoutATPMFallsBackWithTheFloorAtTheLastTrustedTime() throws {
    let device = try Device(wallOffset: .zero, tpm: false)
    try device.signIn()
    device.run(.seconds(3_600))
    let anchored = device.check()
    #expect(anchored.trustedTime?.trustedNow != nil)
    // Reboot: the boot clock starts again, no TPM; the wall clock is set back 2 hours.
    device.boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(30))
    device.trueNow = device.trueNow.saturatingAdvanced(by: .seconds(60))
    device.wall.set(device.trueNow.saturatingAdvanced(by: .seconds(-7_200)))
    let decision = device.check()
    #expect(decision.trustedTime?.trustedNow == nil)
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.clockBehindMark))
    #expect(decision.reasons.contains(.clockBehindElapsedTime))
    // With the correct wall clock after the reboot: today's rules say fresh.
    device.wall.set(device.trueNow)
    #expect(device.check().status == .fresh)
  }

  @Test func scenario5OrderlyTPMRestartCarriesTimeWhileTheWallClockIsHeld() throws {
    let device = try Device(wallOffset: .zero, tpm: true)
    try device.signIn()
    let held = device.wall.now()
    device.run(Self.day * 4)
    try #require(device.tpm).orderlyRestart()
    device.boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(10))
    device.run(Self.day * 4)
    device.wall.set(held)
    let decision = device.check()
    #expect(decision.trustedTime?.carriedBy == .tpmClock)
    #expect(decision.status == .expired)
    #expect(decision.reasons == .tooOld)
  }

  @Test func scenario6RestoredCopyIsRefused() throws {
    // Signed in without a server time, with a TPM: the TPM carries the floor.
    let device = try Device(wallOffset: .zero, tpm: true)
    _ = try device.gate.beginOnlineSession().write(CacheItemKey("token"), Data("x".utf8))
    let copy = try Data(contentsOf: URL(fileURLWithPath: device.directory.appending("clock-mark")))
    let copyTime = device.wall.now()
    device.run(.seconds(600))
    #expect(device.check().status == .fresh)
    try copy.write(to: URL(fileURLWithPath: device.directory.appending("clock-mark")))
    device.boot.reboot(into: BootID(high: 3, low: 3), uptime: .seconds(5))
    device.wall.set(copyTime)
    let decision = device.check()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.clockBehindElapsedTime))
  }

  @Test func scenario7ClearedTPMIsTPMChanged() throws {
    let device = try Device(wallOffset: .zero, tpm: true)
    try device.signIn()
    device.run(.seconds(60))
    try #require(device.tpm).clear(newIdentity: TPMIdentity(9, 9, 9, 9))
    let decision = device.check()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.tpmChanged))
    #expect(decision.trustedTime?.tpmError?.code == .tpmChanged)
    // Refused again (the record keeps the old TPM) until an online sign-in re-anchors.
    #expect(device.check().reasons.contains(.tpmChanged))
    try device.signIn()
    #expect(device.check().status == .fresh)
  }

  @Test func scenario8PowerLossAppliesTheAllowanceAndSaysSo() throws {
    let device = try Device(wallOffset: .zero, tpm: true)
    try device.signIn()
    device.run(.seconds(600))
    try #require(device.tpm).powerLoss(fallBack: .seconds(300))
    device.boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(10))
    device.tpm?.advance(by: .seconds(10))
    let decision = device.check()
    #expect(decision.trustedTime?.appliedPowerLossAllowance == true)
    #expect(decision.status == .fresh)
    // Trusted time counts the whole NV interval: ahead of true time by at most that.
    let trusted = try #require(decision.trustedTime?.trustedNow)
    #expect(trusted > device.trueNow)
    #expect(device.trueNow.duration(to: trusted) <= TPMClockStep.nvUpdateInterval)
  }

  /// Without a server anchor the TPM carries the floor; after a power loss a correct wall
  /// clock stays fresh (the floor counts no allowance) and the decision says the allowance
  /// applied.
  @Test func powerLossWithoutAnAnchorDoesNotRefuseACorrectWallClock() throws {
    let device = try Device(wallOffset: .zero, tpm: true)
    _ = try device.gate.beginOnlineSession().write(CacheItemKey("token"), Data("x".utf8))
    device.run(.seconds(600))
    try #require(device.tpm).powerLoss(fallBack: .seconds(300))
    device.boot.reboot(into: BootID(high: 2, low: 2), uptime: .seconds(10))
    device.tpm?.advance(by: .seconds(10))
    device.trueNow = device.trueNow.saturatingAdvanced(by: .seconds(10))
    device.wall.set(device.trueNow)
    let decision = device.check()
    #expect(decision.status == .fresh, "\(decision.reasons)")
    #expect(decision.trustedTime?.appliedPowerLossAllowance == true)
    // Held 20 minutes back after that power loss: still caught by the 310 s proved.
    device.wall.set(device.trueNow.saturatingAdvanced(by: .seconds(-1_200)))
    #expect(device.check().reasons.contains(.clockBehindMark))
  }

  /// The TPM answers the check before the sign-in but not the reading under the lock: the
  /// sign-in is refused and writes nothing (no reset without the TPM's reading, no items).
  @Test(arguments: [false, true])
  func aTPMFailingUnderTheLockLeavesNothingWritten(anchored: Bool) throws {
    let device = try Device(wallOffset: .zero, tpm: false)
    _ = try device.gate.beginOnlineSession().write(CacheItemKey("old"), Data("x".utf8))
    let before = try FileClockMarkStore(atPath: device.directory.path).read()
    let flaky = FlakyTPMClock(answers: 1)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: device.directory.path),
      marks: FileClockMarkStore(atPath: device.directory.path),
      policy: try EligibilityPolicy(maxAge: Self.week), clock: device.wall,
      bootClock: device.boot, tpmClock: flaky)
    let items = [(CacheItemKey("new"), Data("y".utf8))]
    do {
      if anchored {
        _ = try gate.beginOnlineSession(
          serverTime: device.trueNow, uncertainty: .zero, writing: items)
      } else {
        _ = try gate.beginOnlineSession(writing: items)
      }
      Issue.record("the sign-in succeeded without the TPM's reading")
    } catch {
      #expect(error.code == .tpmUnavailable)
    }
    #expect(flaky.reads == 2, "checked before, and read again under the lock")
    #expect(try FileClockMarkStore(atPath: device.directory.path).read() == before)
    #expect(try DirectoryCacheStore(atPath: device.directory.path).keys() == [CacheItemKey("old")])
  }

  @Test func aMissingTPMIsRefusedNotIgnored() throws {
    let device = try Device(wallOffset: .zero, tpm: true)
    try device.signIn()
    device.tpm?.makeUnavailable()
    let decision = device.check()
    #expect(decision.status == .expired)
    #expect(decision.reasons.contains(.tpmUnavailable))
    #expect(throws: OnlineSessionError.self) { try device.signIn() }
  }

  @Test func withoutServerTimeOrTPMNothingChanges() throws {
    let device = try Device(wallOffset: .zero, tpm: false)
    _ = try device.gate.beginOnlineSession().write(CacheItemKey("token"), Data("x".utf8))
    let decision = device.check()
    #expect(decision.trustedTime == nil)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: device.directory.appending("clock-mark")))
    // No trusted time: format version 1 exactly as before, or version 3 (the record bound to
    // this machine) with its trusted-time flag (bit 9) clear.
    if SystemMachineIdentity().current() == nil {
      #expect(bytes[4] == 1)
    } else {
      #expect(bytes[4] == 3)
      #expect(bytes[73] & 0x02 == 0)
    }
  }

  @Test func readerRecheckUsesTrustedTime() throws {
    let device = try Device(wallOffset: .zero - Self.day * 30, tpm: false)
    try device.signIn()
    guard case .opened(let reader) = device.gate.openOffline() else {
      Issue.record("not opened")
      return
    }
    #expect(try reader.item(forKey: try CacheItemKey("token")) != nil)
    device.run(Self.week + .seconds(400))
    #expect(throws: OfflineReadError.self) { try reader.item(forKey: try CacheItemKey("token")) }
  }

  @Test func aNegativeUncertaintyIsRefused() throws {
    let device = try Device(wallOffset: .zero, tpm: false)
    #expect(throws: OnlineSessionError.self) {
      try device.gate.beginOnlineSession(serverTime: device.trueNow, uncertainty: .seconds(-1))
    }
  }
}

/// A TPM that answers its first `answers` readings and then is unreachable.
final class FlakyTPMClock: TPMClock, @unchecked Sendable {
  // @unchecked: one test drives it from one thread.
  private let answers: Int
  private(set) var reads = 0
  private let clock = ManualTPMClock(identity: TPMIdentity(7, 7, 7, 7), clock: .seconds(50))

  init(answers: Int) { self.answers = answers }

  func now() throws(TPMClockError) -> TPMClockReading {
    reads += 1
    guard reads <= answers else {
      throw TPMClockError(code: .tpmUnavailable, reason: "gone after \(answers) readings (test)")
    }
    return try clock.now()
  }
}
