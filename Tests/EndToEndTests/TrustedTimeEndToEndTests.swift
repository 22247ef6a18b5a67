import Foundation
import OfflineTTLTesting
import Testing

/// Whether this package was built with the `TPM` trait (the binary has `--tpm`).
#if TPM
  private let tpmTrait = true
#else
  private let tpmTrait = false
#endif

/// The eight trusted-time scenarios of issue 14, end to end on the built `offline-ttl`: the
/// wall clock moved by libfaketime, the boot clock and the boot id by `unshare` (time and mount
/// namespaces: "a week later" is a boot clock a week ahead, a reboot is another boot id with a
/// restarted boot clock), the TPM a real software TPM (swtpm) restarted, cleared, killed or
/// moved forward with `TPM2_ClockSet`. Every child runs under a timeout (``BinaryRunner/hangBound``) and is
/// killed by its pid; each scenario is skipped, with the tool named, when a tool is missing.
///
/// The same scenarios on the library with manual clocks: `TrustedTimeGateTests`.
@Suite struct TrustedTimeEndToEndTests {
  static let day: Int64 = 86_400
  static let week: Int64 = 7 * 86_400
  static let second: Int64 = 1_000_000_000
  /// 2 s + 500 ppm of a week: how much later than the real deadline trusted time lets a cache
  /// expire (the drift allowance), rounded up.
  static let weekAllowance: Int64 = 305

  static let tools = FakeTime.library != nil && SimulatedMachine.namespacesWork
  static let toolsMissing: Comment = Comment(
    rawValue:
      "needs faketime (libfaketime.so.1, Debian package faketime) and unshare with mount and time"
      + " namespaces (util-linux; root or user namespaces)")
  static let swtpm = tpmTrait && SwtpmProcess.isAvailable
  static let swtpmMissing: Comment = Comment(
    rawValue: "needs the TPM trait, swtpm and tpm2-tools (Debian: swtpm swtpm-tools tpm2-tools)")
  static let tpmTools = tools && swtpm
  static let tpmToolsMissing: Comment = Comment(
    rawValue:
      "needs the TPM trait, swtpm and tpm2-tools (Debian: swtpm swtpm-tools tpm2-tools), faketime"
      + " and unshare with mount and time namespaces")

  /// A store with one item's input file, in a scratch directory.
  struct Device {
    let scratch: TemporaryStoreDirectory
    let store: String
    let input: String

    init() throws {
      scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-trusted")
      store = scratch.appending("store")
      input = scratch.appending("token.txt")
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
    }

    /// `sign-in --store S --put token=F --json`, plus `extra`.
    func signIn(
      _ extra: [String] = [], wall: SimulatedWallClock = .real, boot: SimulatedBoot = .current
    ) throws -> BinaryResult {
      let result = try SimulatedMachine.run(
        ["sign-in", "--store", store, "--put", "token=\(input)", "--json"] + extra, wall: wall,
        boot: boot)
      #expect(result.exitCode == 0, "\(result.standardError)")
      return result
    }

    /// `status --store S --max-age M --json`, plus `extra`.
    func status(
      maxAge: String = "7d", _ extra: [String] = [], wall: SimulatedWallClock = .real,
      boot: SimulatedBoot = .current
    ) throws -> BinaryResult {
      try SimulatedMachine.run(
        ["status", "--store", store, "--max-age", maxAge, "--json"] + extra, wall: wall,
        boot: boot)
    }

    func remove() { scratch.remove() }
  }

  /// Runs `body` with a new device and a new software TPM, and `tpm` = `--tpm <its TCTI>`;
  /// removes the store and stops the TPM after, whatever `body` does.
  static func withTPMDevice(_ body: (Device, SwtpmProcess, [String]) throws -> Void) throws {
    let device = try Device()
    defer { device.remove() }
    let swtpm = try SwtpmProcess()
    defer { swtpm.stop() }
    try body(device, swtpm, ["--tpm", swtpm.tcti])
  }

  /// `--server-time <t0> --server-time-uncertainty 500ms`.
  static func serverTime(_ seconds: Int64) -> [String] {
    ["--server-time", String(seconds), "--server-time-uncertainty", "500ms"]
  }

  static func reasons(_ result: BinaryResult) throws -> [String] {
    try #require(try result.jsonObject()["reasons"] as? [String], "\(result.standardOutput)")
  }

  static func string(_ result: BinaryResult, _ key: String) throws -> String? {
    try result.jsonObject()[key] as? String
  }

  // MARK: - Without a TPM

  /// 1. Clock 30 days slow at sign-in, `--server-time` the true time: fresh in the same boot;
  /// still fresh right after the clock is corrected; expired once the max age of real time
  /// has passed (a boot clock a week ahead), whatever the wall clock says.
  @Test(.enabled(if: tools, toolsMissing))
  func scenario1SlowClockAtSignIn() throws {
    let device = try Device()
    defer { device.remove() }
    let slow = SimulatedWallClock.offset(seconds: -30 * Self.day)
    let t0 = SimulatedMachine.realSeconds()
    let signIn = try device.signIn(Self.serverTime(t0), wall: slow)
    // Items are stamped with trusted time (server time - 500 ms - 2 s), not the slow clock.
    #expect(try signIn.jsonInt64("written_at_ns") == t0 * Self.second - 2_500_000_000)

    let sameBoot = try device.status(wall: slow)
    #expect(sameBoot.exitCode == 0, "\(sameBoot.standardOutput)")
    #expect(try Self.reasons(sameBoot) == [])
    #expect(try Self.string(sameBoot, "effective_clock") == "trusted")
    #expect(try sameBoot.jsonInt64("wall_offset_ns") < -29 * Self.day * Self.second)
    let trusted = try sameBoot.jsonInt64("trusted_time_ns")
    #expect(trusted > (t0 - 3) * Self.second && trusted < (t0 + 60) * Self.second)

    let corrected = try device.status()
    #expect(corrected.exitCode == 0, "\(corrected.standardOutput)")
    #expect(try Self.reasons(corrected) == [])
    // The wall clock minus trusted time: the 2.5 s of uncertainty and allowance, plus how late
    // the sign-in read its clocks after t0 (at most the time it took; seconds on a loaded
    // machine).
    let signInSeconds = signIn.elapsed.components.seconds + 1
    #expect(
      abs(try corrected.jsonInt64("wall_offset_ns")) < (10 + signInSeconds) * Self.second,
      "the sign-in took \(signIn.elapsed)")

    let late = Self.week + Self.weekAllowance + 60
    let expired = try device.status(wall: .offset(seconds: late), boot: .ahead(seconds: late))
    #expect(expired.exitCode == 1, "\(expired.standardOutput)")
    #expect(try Self.reasons(expired) == ["too_old"])
    #expect(try Self.string(expired, "carried_by") == "boot_clock")
    // The same moment with the wall clock still 30 days slow: expired all the same.
    let stillSlow = try device.status(
      wall: .offset(seconds: late - 30 * Self.day), boot: .ahead(seconds: late))
    #expect(try Self.reasons(stillSlow) == ["too_old"], "\(stillSlow.standardOutput)")
  }

  /// 2. Clock 1 day fast at sign-in with `--server-time`, then corrected: fresh, no lockout
  /// (no clock_behind_mark), and the same real deadline.
  @Test(.enabled(if: tools, toolsMissing))
  func scenario2FastClockAtSignInThenCorrected() throws {
    let device = try Device()
    defer { device.remove() }
    let fast = SimulatedWallClock.offset(seconds: Self.day)
    let t0 = SimulatedMachine.realSeconds()
    let signIn = try device.signIn(Self.serverTime(t0), wall: fast)
    let writtenAt = try signIn.jsonInt64("written_at_ns")
    #expect(writtenAt == t0 * Self.second - 2_500_000_000)

    let whileFast = try device.status(wall: fast)
    #expect(whileFast.exitCode == 0, "\(whileFast.standardOutput)")
    let corrected = try device.status()
    #expect(corrected.exitCode == 0, "\(corrected.standardOutput)")
    #expect(try Self.reasons(corrected) == [], "no lockout after the correction")
    // The same real deadline, fast or corrected: the item's trusted stamp + 7 days.
    #expect(try whileFast.jsonInt64("deadline_ns") == writtenAt + Self.week * Self.second)
    #expect(try corrected.jsonInt64("deadline_ns") == writtenAt + Self.week * Self.second)

    let before = Self.week - 120
    let justBefore = try device.status(
      wall: .offset(seconds: before), boot: .ahead(seconds: before))
    #expect(justBefore.exitCode == 0, "\(justBefore.standardOutput)")
    let after = Self.week + Self.weekAllowance + 215
    let justAfter = try device.status(wall: .offset(seconds: after), boot: .ahead(seconds: after))
    #expect(justAfter.exitCode == 1)
    #expect(try Self.reasons(justAfter) == ["too_old"], "\(justAfter.standardOutput)")
  }

  /// 3. Wall clock held, then set back, after an anchored sign-in: expires at the real
  /// deadline.
  @Test(.enabled(if: tools, toolsMissing))
  func scenario3HeldOrSetBackWallClock() throws {
    let device = try Device()
    defer { device.remove() }
    let t0 = SimulatedMachine.realSeconds()
    _ = try device.signIn(Self.serverTime(t0))
    let held = SimulatedWallClock.frozen(atSecondsSinceEpoch: t0)
    let now = try device.status(wall: held)
    #expect(now.exitCode == 0, "\(now.standardOutput)")

    let late = Self.week + Self.weekAllowance + 60
    let heldLate = try device.status(wall: held, boot: .ahead(seconds: late))
    #expect(heldLate.exitCode == 1)
    #expect(try Self.reasons(heldLate) == ["too_old"], "\(heldLate.standardOutput)")
    let setBack = try device.status(
      wall: .frozen(atSecondsSinceEpoch: t0 - Self.day), boot: .ahead(seconds: late))
    #expect(setBack.exitCode == 1)
    #expect(try Self.reasons(setBack) == ["too_old"], "\(setBack.standardOutput)")
    #expect(try setBack.jsonInt64("wall_offset_ns") < -(Self.week + Self.day) * Self.second)
  }

  /// 4. A reboot without a TPM (another boot id, a restarted boot clock): the anchor stops
  /// holding, today's rules decide, with the floor at the last trusted time.
  @Test(.enabled(if: tools, toolsMissing))
  func scenario4RebootWithoutATPM() throws {
    let device = try Device()
    defer { device.remove() }
    let t0 = SimulatedMachine.realSeconds()
    _ = try device.signIn(Self.serverTime(t0))
    let hour: Int64 = 3_600
    let anchored = try device.status(wall: .offset(seconds: hour), boot: .ahead(seconds: hour))
    #expect(anchored.exitCode == 0, "\(anchored.standardOutput)")
    let lastTrusted = try anchored.jsonInt64("trusted_time_ns")
    // Server time + 1 h - 500 ms - (2 s + 500 ppm of 1 h = 3.8 s).
    #expect(lastTrusted >= (t0 + hour - 5) * Self.second)

    let reboot = SimulatedBoot.rebooted(try SimulatedReboot(in: device.scratch.path))
    // A minute after the reboot, the wall clock set 2 hours back.
    let setBack = try device.status(wall: .offset(seconds: hour + 60 - 7_200), boot: reboot)
    #expect(setBack.exitCode == 1, "\(setBack.standardOutput)")
    let reasons = try Self.reasons(setBack)
    #expect(reasons.contains("clock_behind_mark"), "\(reasons)")
    #expect(reasons.contains("clock_behind_elapsed_time"), "\(reasons)")
    #expect(try setBack.jsonObject()["trusted_time"] is NSNull, "the anchor stopped holding")
    #expect(try setBack.jsonInt64("floor_ns") >= lastTrusted, "the floor is the last trusted time")

    // The correct wall clock after the reboot: today's rules say fresh.
    let correct = try device.status(wall: .offset(seconds: hour + 60), boot: reboot)
    #expect(correct.exitCode == 0, "\(correct.standardOutput)")
    #expect(try Self.string(correct, "effective_clock") != "trusted")
  }

  // MARK: - With a software TPM

  /// 5. An orderly restart (TPM2_Shutdown, then swtpm again, in another boot) while the wall
  /// clock is held: the TPM time across the restart counts, and the cache expires by it.
  ///
  /// The TPM time passes by `TPM2_ClockSet` (10 minutes), not by waiting: the TPM's clock stops
  /// while swtpm is down and each command may take seconds on a loaded machine, so no real wait
  /// tells how much TPM time passed. The max age (5 minutes) is far above the real time the
  /// commands take and far below the TPM time that passes.
  @Test(.enabled(if: tpmTools && SwtpmProcess.canSetClock, tpmToolsMissing))
  func scenario5OrderlyTPMRestartWithAHeldWallClock() throws {
    try Self.withTPMDevice { device, swtpm, tpm in
      let t0 = SimulatedMachine.realSeconds()
      let signIn = try device.signIn(Self.serverTime(t0) + tpm)
      let anchorClock = try signIn.jsonInt64("tpm_clock_ms")
      let held = SimulatedWallClock.frozen(atSecondsSinceEpoch: t0)
      let fresh = try device.status(maxAge: "5m", tpm, wall: held)
      #expect(fresh.exitCode == 0, "\(fresh.standardOutput)")

      let advanced = try swtpm.advanceClock(by: .seconds(600))
      try swtpm.orderlyRestart()
      let reboot = SimulatedBoot.rebooted(try SimulatedReboot(in: device.scratch.path))
      // 10 minutes of TPM time since the sign-in: more than the 5 minute max age plus the
      // allowance (2 s + 500 ppm) counted from the stamp 2.5 s before the anchor.
      let expired = try device.status(maxAge: "5m", tpm, wall: held, boot: reboot)
      #expect(expired.exitCode == 1, "\(expired.standardOutput) \(expired.standardError)")
      #expect(try Self.reasons(expired) == ["too_old"])
      #expect(try Self.string(expired, "carried_by") == "tpm_clock")
      #expect(try expired.jsonInt64("tpm_clock_ms") >= Int64(advanced), "the clock set survived")
      #expect(try expired.jsonInt64("tpm_clock_ms") - anchorClock >= 600_000)
      // Server time − 500 ms − (2 s + 500 ppm of 600 s) + 600 s.
      #expect(try expired.jsonInt64("trusted_time_ns") >= (t0 + 597) * Self.second)
      #expect(try expired.jsonInt64("tpm_reset_count") >= 1)
      #expect(try expired.jsonObject()["tpm_safe"] as? Bool == true)
      #expect(try expired.jsonObject()["tpm_power_loss_allowance"] as? Bool == false)
    }
  }

  /// 6. A copy of the store taken at sign-in, restored 10 minutes of TPM time later (in another
  /// boot) with the wall clock set back to the copy's time: refused, because the copy's floor
  /// plus the TPM's elapsed time is far ahead of that wall clock.
  @Test(.enabled(if: tpmTools && SwtpmProcess.canSetClock, tpmToolsMissing))
  func scenario6RestoredCopyIsRefused() throws {
    try Self.withTPMDevice { device, swtpm, tpm in
      let signIn = try device.signIn(tpm)
      let copyMark = try signIn.jsonInt64("mark_ns")
      let copy = device.scratch.appending("copy")
      try FileManager.default.copyItem(atPath: device.store, toPath: copy)

      try swtpm.advanceClock(by: .seconds(600))
      // The live store, 10 minutes later by the TPM and the wall clock: fresh.
      let live = try device.status(tpm, wall: .offset(seconds: 600))
      #expect(live.exitCode == 0, "\(live.standardOutput)")

      try FileManager.default.removeItem(atPath: device.store)
      try FileManager.default.copyItem(atPath: copy, toPath: device.store)
      let reboot = SimulatedBoot.rebooted(try SimulatedReboot(in: device.scratch.path))
      let copyTime = (copyMark + Self.second - 1) / Self.second
      let restored = try device.status(
        tpm, wall: .frozen(atSecondsSinceEpoch: copyTime), boot: reboot)
      #expect(restored.exitCode == 1, "\(restored.standardOutput)")
      #expect(try Self.reasons(restored).contains("clock_behind_elapsed_time"))
      #expect(try restored.jsonInt64("floor_ns") >= copyMark + 600 * Self.second)
      #expect(try Self.string(restored, "carried_by") == "tpm_clock")
    }
  }

  /// 7. The TPM cleared under the store, or another TPM (a new swtpm state): `tpm_changed`
  /// until an online sign-in re-anchors.
  @Test(.enabled(if: swtpm, swtpmMissing))
  func scenario7ClearedOrReplacedTPMIsTPMChanged() throws {
    try Self.withTPMDevice { device, swtpm, tpm in
      _ = try device.signIn(Self.serverTime(SimulatedMachine.realSeconds()) + tpm)
      #expect(try device.status(tpm).exitCode == 0)

      try swtpm.clear()
      let cleared = try device.status(tpm)
      #expect(cleared.exitCode == 1, "\(cleared.standardOutput)")
      #expect(try Self.reasons(cleared).contains("tpm_changed"))
      #expect(try Self.string(cleared, "tpm_error")?.hasPrefix("tpm_changed: ") == true)
      let read = try SimulatedMachine.run(
        ["read", "--store", device.store, "--max-age", "7d", "token"] + tpm)
      #expect(read.exitCode == 1)
      #expect(read.standardError.contains("tpm_changed"), "\(read.standardError)")
      #expect(read.standardOutput.isEmpty, "no byte of the item is served")

      _ = try device.signIn(Self.serverTime(SimulatedMachine.realSeconds()) + tpm)
      #expect(try device.status(tpm).exitCode == 0, "an online sign-in re-anchors")

      let other = try SwtpmProcess()
      defer { other.stop() }
      let replaced = try device.status(["--tpm", other.tcti])
      #expect(replaced.exitCode == 1)
      #expect(try Self.reasons(replaced).contains("tpm_changed"), "\(replaced.standardOutput)")
    }
  }

  /// 8. swtpm killed (no orderly shutdown) and started again, in another boot: the power-loss
  /// allowance (2^22 ms) applies, the decision says so, and the cache stays fresh.
  @Test(.enabled(if: tpmTools, tpmToolsMissing))
  func scenario8PowerLossAppliesTheAllowance() throws {
    try Self.withTPMDevice { device, swtpm, tpm in
      let t0 = SimulatedMachine.realSeconds()
      _ = try device.signIn(Self.serverTime(t0) + tpm)
      try swtpm.powerLoss()
      let reboot = SimulatedBoot.rebooted(try SimulatedReboot(in: device.scratch.path))
      let text = try SimulatedMachine.run(
        ["status", "--store", device.store, "--max-age", "7d"] + tpm, boot: reboot)
      #expect(text.exitCode == 0, "\(text.standardOutput) \(text.standardError)")
      #expect(
        text.standardOutput.contains("safe no; the TPM lost power since the last record"),
        "\(text.standardOutput)")

      // Killed again (before the TPM saved its clock, perhaps): the allowance applies again.
      try swtpm.powerLoss()
      let after = try device.status(tpm, boot: reboot)
      #expect(after.exitCode == 0, "\(after.standardOutput) \(after.standardError)")
      let object = try after.jsonObject()
      #expect(object["tpm_power_loss_allowance"] as? Bool == true)
      #expect(try after.jsonInt64("tpm_power_loss_allowance_ns") == 4_194_304_000_000)
      #expect(object["tpm_safe"] as? Bool == false)
      #expect(object["carried_by"] as? String == "tpm_clock")
      // Trusted time counts the whole NV update interval at each of the two power losses: about
      // 2 × 69.9 minutes ahead of the wall clock, less the 500 ms uncertainty and the 2 s +
      // 500 ppm allowance (≈ 8,381.9 s), give or take the real time since t0 (`late`, whole
      // seconds rounded up): the wall clock ran that long, and the TPM ran at most that long
      // (it falls back at a power loss and stops while swtpm restarts), each command taking
      // seconds on a loaded machine.
      let late = SimulatedMachine.realSeconds() + 1 - t0
      let offset = try after.jsonInt64("wall_offset_ns")
      #expect(
        offset > -(8_382 + late) * Self.second && offset < -(8_381 - late) * Self.second,
        "\(offset) ns, \(late) s after t0")
    }
  }

  /// A configured TPM that cannot be reached: status refuses (`tpm_unavailable`), sign-in
  /// writes nothing (exit 74).
  @Test(.enabled(if: swtpm, swtpmMissing))
  func anUnreachableTPMIsRefusedNeverIgnored() throws {
    try Self.withTPMDevice { device, swtpm, tpm in
      _ = try device.signIn(tpm)
      swtpm.stop()
      let status = try device.status(tpm)
      #expect(status.exitCode == 1)
      #expect(try Self.reasons(status) == ["tpm_unavailable"], "\(status.standardOutput)")
      let before = try Data(contentsOf: URL(fileURLWithPath: device.store + "/clock-mark"))
      let signIn = try SimulatedMachine.run(
        ["sign-in", "--store", device.store, "--put", "token=\(device.input)"] + tpm)
      #expect(signIn.exitCode == 74)
      #expect(signIn.standardError.contains("tpm_unavailable"), "\(signIn.standardError)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: device.store + "/clock-mark")) == before)
    }
  }
}
