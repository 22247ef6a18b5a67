import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

/// `sign-in --server-time`, `--server-time-uncertainty`, `--tpm`, and the trusted-time fields
/// of `status`, in process on manual clocks (the binary, libfaketime and swtpm:
/// `TrustedTimeEndToEndTests`).
@Suite struct TrustedTimeCommandTests {
  static let day = Duration.seconds(86_400)

  /// Runs `offline-ttl <arguments>` with a boot clock that `boot` moves and, for `--tpm`, the
  /// manual TPM `tpm` (any TCTI value opens it).
  func run(
    _ arguments: [String], clock: ManualWallClock, boot: ManualBootClock,
    tpm: ManualTPMClock? = nil
  ) -> CommandRun {
    var context = CommandContext(
      standardOutput: OutputSink(), standardError: OutputSink(),
      standardInput: InputSource(text: ""), clock: clock, environment: [:], bootClock: boot)
    if let tpm {
      context.openTPM = { (_: String, _: Duration) throws(UsageError) -> any TPMClock in tpm }
    }
    let code = OfflineTTLCommand.run(arguments, context: context)
    return CommandRun(
      exitCode: code, standardOutput: context.standardOutput.capturedText,
      standardError: context.standardError.capturedText)
  }

  func json(_ run: CommandRun) throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any],
      "\(run.standardOutput) \(run.standardError)")
  }

  func int64(_ object: [String: Any], _ key: String) throws -> Int64 {
    try #require((object[key] as? NSNumber)?.int64Value, "\(key) in \(object)")
  }

  /// A store signed in with an item while the wall clock is 30 days slow and the server says
  /// the true time.
  @Test func aSlowClockAtSignInIsReportedNotPunished() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let input = directory.appending("in")
    try Data("t".utf8).write(to: URL(fileURLWithPath: input))
    let store = directory.appending("store")
    let trueNow = storeCommandStart
    let clock = ManualWallClock(trueNow.saturatingAdvanced(by: .zero - Self.day * 30))
    let boot = stillBootClock()
    let signIn = run(
      [
        "sign-in", "--store", store, "--put", "token=\(input)", "--server-time",
        trueNow.rfc3339, "--server-time-uncertainty", "250ms", "--json",
      ], clock: clock, boot: boot)
    #expect(signIn.exitCode == .success, "\(signIn.standardError)")
    let signed = try json(signIn)
    // Stamped with trusted time: server time - uncertainty - 2 s, not the slow wall clock.
    let stamp = trueNow.nanosecondsSinceEpoch - 2_250_000_000
    #expect(try int64(signed, "written_at_ns") == stamp)
    #expect(try int64(signed, "anchor_server_time_ns") == trueNow.nanosecondsSinceEpoch)
    #expect(try int64(signed, "trusted_time_ns") == stamp)
    #expect(signed["tpm_clock_ms"] is NSNull)

    clock.advance(by: .seconds(60))
    boot.advance(by: .seconds(60))
    let status = run(
      ["status", "--store", store, "--max-age", "7d", "--json"], clock: clock, boot: boot)
    #expect(status.exitCode == .fresh, "\(status.standardOutput)")
    let decided = try json(status)
    #expect(decided["status"] as? String == "fresh")
    #expect(decided["effective_clock"] as? String == "trusted")
    #expect(decided["carried_by"] as? String == "boot_clock")
    #expect(decided["tpm"] as? String == "off")
    // Trusted time: server + 60 s - 250 ms - (2 s + 500 ppm × 60 s = 2.03 s).
    let trusted = trueNow.nanosecondsSinceEpoch + 60_000_000_000 - 250_000_000 - 2_030_000_000
    #expect(try int64(decided, "trusted_time_ns") == trusted)
    #expect(try int64(decided, "effective_now_ns") == trusted)
    #expect(try int64(decided, "wall_clock_ns") == clock.now().nanosecondsSinceEpoch)
    #expect(
      try int64(decided, "wall_offset_ns") == clock.now().nanosecondsSinceEpoch - trusted)
    #expect(try int64(decided, "anchor_uncertainty_ns") == 250_000_000)
    #expect(decided["anchor_boot_id"] as? String == storeCommandBootID.description)

    let text = run(["status", "--store", store, "--max-age", "7d"], clock: clock, boot: boot)
    #expect(text.exitCode == .fresh)
    #expect(
      text.standardOutput.contains(
        "trusted_time: \(WallClockInstant(nanosecondsSinceEpoch: trusted).rfc3339) (the wall"
          + " clock is 29d23h59m57s behind)\n"), "\(text.standardOutput)")
    #expect(
      text.standardOutput.contains(
        "anchor: server time \(trueNow.rfc3339) ± 250ms\ncarried_by: boot_clock\ntpm: off\n"))

    // A week of boot-clock time later (plus the drift allowance, 2 s + 500 ppm of a week =
    // 304.4 s), with the wall clock still slow: expired by real time.
    clock.advance(by: Self.day * 7 + .seconds(400))
    boot.advance(by: Self.day * 7 + .seconds(400))
    let late = run(["status", "--store", store, "--max-age", "7d"], clock: clock, boot: boot)
    #expect(late.exitCode == .expired)
    #expect(late.standardOutput.contains("reasons: too_old\n"), "\(late.standardOutput)")
  }

  @Test(arguments: [
    ("1700000000", 1_700_000_000_000_000_000), ("2023-11-14T22:13:20Z", 1_700_000_000_000_000_000),
    ("2023-11-14T23:13:20.5+01:00", 1_700_000_000_500_000_000), ("-1", -1_000_000_000),
  ])
  func serverTimeIsRFC3339OrIntegerSeconds(text: String, nanoseconds: Int64) throws {
    #expect(
      try TrustedTimeOptions.serverTime(text)
        == WallClockInstant(nanosecondsSinceEpoch: nanoseconds))
  }

  @Test(arguments: [
    (["--server-time", "yesterday"], "--server-time: expected an RFC 3339 time"),
    (["--server-time", "2023-11-14 22:13:20"], "--server-time: expected an RFC 3339 time"),
    (["--server-time", "99999999999999999"], "--server-time:"),
    (["--server-time", ""], "--server-time: expected"),
    (
      ["--server-time", "1700000000", "--server-time-uncertainty", "-1s"],
      "--server-time-uncertainty: "
    ),
    (
      ["--server-time", "1700000000", "--server-time-uncertainty", "5"], "--server-time-uncertainty"
    ),
    (["--server-time-uncertainty", "1s"], "--server-time-uncertainty needs --server-time"),
  ])
  func badServerTimesAreUsageErrorsAndWriteNothing(extra: [String], message: String) throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = directory.appending("store")
    let result = run(
      ["sign-in", "--store", store] + extra, clock: ManualWallClock(storeCommandStart),
      boot: stillBootClock())
    #expect(result.exitCode == .usage)
    #expect(result.standardError.contains(message), "\(result.standardError)")
    #expect(!FileManager.default.fileExists(atPath: store), "nothing is created")
  }

  @Test func withoutServerTimeTheSignInOutputIsUnchanged() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let result = run(
      ["sign-in", "--store", directory.path, "--json"], clock: ManualWallClock(storeCommandStart),
      boot: stillBootClock())
    #expect(!result.standardOutput.contains("trusted_time"))
    let status = run(
      ["status", "--store", directory.path, "--max-age", "1d", "--json"],
      clock: ManualWallClock(storeCommandStart), boot: stillBootClock())
    #expect(!status.standardOutput.contains("trusted_time"))
    #expect(!status.standardOutput.contains("\"tpm\""))
  }

  #if TPM
    @Test func tpmIsRecordedAtSignInAndReportedByStatus() throws {
      let directory = try TemporaryStoreDirectory()
      defer { directory.remove() }
      let clock = ManualWallClock(storeCommandStart)
      let boot = stillBootClock()
      let tpm = ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(500))
      let tcti = ["--tpm", "swtpm:host=127.0.0.1,port=2321"]
      // The input beside the store, not in it: a new store needs a directory of its own.
      let inputs = try TemporaryStoreDirectory()
      defer { inputs.remove() }
      let input = inputs.appending("in")
      try Data("t".utf8).write(to: URL(fileURLWithPath: input))
      let signIn = run(
        ["sign-in", "--store", directory.path, "--put", "token=\(input)", "--json"] + tcti,
        clock: clock, boot: boot, tpm: tpm)
      #expect(signIn.exitCode == .success, "\(signIn.standardError)")
      #expect(try int64(json(signIn), "tpm_clock_ms") == 500_000)
      #expect(try json(signIn)["trusted_time"] is NSNull, "no server time: no trusted time")

      tpm.advance(by: .seconds(30))
      clock.advance(by: .seconds(30))
      let status = ["status", "--store", directory.path, "--max-age", "1d", "--json"] + tcti
      let decided = try json(run(status, clock: clock, boot: boot, tpm: tpm))
      #expect(decided["reasons"] as? [String] == [])
      #expect(decided["tpm"] as? String == "on")
      #expect(try int64(decided, "tpm_clock_ms") == 530_000)
      #expect(decided["tpm_safe"] as? Bool == true)
      #expect(decided["tpm_identity"] as? String == TPMIdentity(1, 2, 3, 4).description)
      #expect(decided["tpm_power_loss_allowance"] as? Bool == false)
      #expect(decided["carried_by"] as? String == "tpm_clock")
      #expect(decided["trusted_time"] is NSNull)
      #expect(decided["tpm_error"] is NSNull)

      // A power loss: the allowance applies, and the decision says so.
      tpm.powerLoss(fallBack: .seconds(10))
      let lost = try json(run(status, clock: clock, boot: boot, tpm: tpm))
      #expect(lost["tpm_power_loss_allowance"] as? Bool == true)
      #expect(try int64(lost, "tpm_power_loss_allowance_ns") == 4_194_304_000_000)
      #expect(lost["tpm_safe"] as? Bool == false)
      #expect(lost["reasons"] as? [String] == [], "the floor counts no allowance")
      let text = run(Array(status.dropLast(3)) + tcti, clock: clock, boot: boot, tpm: tpm)
      #expect(text.standardOutput.contains("safe no\n") || text.standardOutput.contains("safe no;"))

      // Another TPM: tpm_changed, exit 1, and the reason on both outputs.
      tpm.clear(newIdentity: TPMIdentity(9, 9, 9, 9))
      let changed = run(status, clock: clock, boot: boot, tpm: tpm)
      #expect(changed.exitCode == .expired)
      let refused = try json(changed)
      #expect(refused["reasons"] as? [String] == ["tpm_changed"])
      #expect((refused["tpm_error"] as? String)?.hasPrefix("tpm_changed: ") == true)
      let changedText = run(
        ["status", "--store", directory.path, "--max-age", "1d"] + tcti, clock: clock,
        boot: boot, tpm: tpm)
      #expect(changedText.standardOutput.contains("tpm_error: tpm_changed: "))
    }

    @Test func anUnreadableTPMRefusesTheSignInAndWritesNothing() throws {
      let directory = try TemporaryStoreDirectory()
      defer { directory.remove() }
      let clock = ManualWallClock(storeCommandStart)
      let tpm = ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4))
      tpm.makeUnavailable()
      let input = directory.appending("in")
      try Data("t".utf8).write(to: URL(fileURLWithPath: input))
      let store = directory.appending("store")
      let result = run(
        [
          "sign-in", "--store", store, "--put", "token=\(input)", "--server-time", "1700000000",
          "--tpm", "device:/dev/tpmrm0",
        ], clock: clock, boot: stillBootClock(), tpm: tpm)
      #expect(result.exitCode == .ioError)
      #expect(result.standardError.contains("tpm_unavailable"), "\(result.standardError)")
      #expect(throws: StoreError.self) { try FileClockMarkStore(atPath: store).read() }
      #expect(try DirectoryCacheStore(atPath: store).keys().isEmpty)
    }

    @Test func markObserveAndResetRecordTheTPMAndShowRefusesIt() throws {
      let directory = try TemporaryStoreDirectory()
      defer { directory.remove() }
      let clock = ManualWallClock(storeCommandStart)
      let boot = stillBootClock()
      let tpm = ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(7))
      let tcti = ["--tpm", "swtpm:host=127.0.0.1,port=2321"]
      let reset = run(
        ["mark", "reset", "--store", directory.path, "--now", "100"] + tcti, clock: clock,
        boot: boot, tpm: tpm)
      #expect(reset.standardOutput == "mark 100 generation 1\n", "\(reset.standardError)")
      #expect(
        try FileClockMarkStore(atPath: directory.path).read().trustedTime?.lastTPM == tpm.reading)
      tpm.advance(by: .seconds(1))
      let observe = run(
        ["mark", "observe", "--store", directory.path, "--now", "200"] + tcti, clock: clock,
        boot: boot, tpm: tpm)
      #expect(observe.standardOutput == "mark 200 generation 1\n")
      #expect(
        try FileClockMarkStore(atPath: directory.path).read().trustedTime?.lastTPM?
          .clockMilliseconds == 8_000)
      tpm.clear(newIdentity: TPMIdentity(5, 5, 5, 5))
      let changed = run(
        ["mark", "observe", "--store", directory.path, "--now", "300"] + tcti, clock: clock,
        boot: boot, tpm: tpm)
      #expect(changed.exitCode == .expired)
      #expect(changed.standardError.contains("tpm_changed"))
      #expect(try FileClockMarkStore(atPath: directory.path).read().mark.count(in: .seconds) == 200)
      tpm.makeUnavailable()
      let unavailable = run(
        ["mark", "observe", "--store", directory.path, "--now", "400"] + tcti, clock: clock,
        boot: boot, tpm: tpm)
      #expect(unavailable.exitCode == .expired)
      #expect(unavailable.standardError.contains("tpm_unavailable"))
      let show = run(
        ["mark", "show", "--store", directory.path] + tcti, clock: clock, boot: boot, tpm: tpm)
      #expect(show.exitCode == .usage)
    }

    @Test(arguments: ["tpmrm0", "/dev/tpmrm0", "usb:x", ""])
    func aValueThatIsNotATCTIIsAUsageError(value: String) throws {
      let directory = try TemporaryStoreDirectory()
      defer { directory.remove() }
      let result = runCommand(
        ["status", "--store", directory.path, "--max-age", "1d", "--tpm", value],
        clock: ManualWallClock(storeCommandStart))
      #expect(result.exitCode == .usage)
      #expect(result.standardError.contains("--tpm"), "\(result.standardError)")
    }
  #endif
}
