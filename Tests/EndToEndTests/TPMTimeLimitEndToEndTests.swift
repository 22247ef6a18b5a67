import Foundation
import OfflineTTLTesting
import Testing

#if TPM
  private let tpmTrait = true
#else
  private let tpmTrait = false
#endif

/// The TPM's time limit on the built `offline-ttl`: `status --tpm` against a TPM endpoint that
/// never answers, a swtpm another client holds, and a port with nothing listening ends within
/// `--tpm-timeout` (or its 5 s default), refuses with `tpm_unavailable` and says why
/// (`tpm_error`), with exit status 1; the TPM Software Stack's own log stays off standard error
/// unless `TSS2_LOG` asks for it. Each child is killed after 30 s, far beyond every limit here.
@Suite(.enabled(if: tpmTrait, "needs the TPM trait (libtss2-dev)"))
struct TPMTimeLimitEndToEndTests {
  static let childBound: Duration = .seconds(30)
  /// How late past its limit a refused status may end on a loaded machine (a process start,
  /// the store's checks, and the sign-in's files).
  static let slack: Duration = .seconds(4)

  /// A signed-in store (no TPM at sign-in), in a scratch directory.
  struct Store {
    let scratch: TemporaryStoreDirectory
    let path: String

    init() throws {
      scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-tpm-limit")
      path = scratch.appending("store")
      let input = scratch.appending("token.txt")
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let signIn = try BinaryRunner().run(
        ["sign-in", "--store", path, "--put", "token=\(input)"], timeout: childBound)
      #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    }

    /// `status --store S --max-age 7d --tpm <tcti>` plus `extra`.
    func status(
      tcti: String, _ extra: [String] = [], environment: [String: String] = [:]
    ) throws -> BinaryResult {
      let result = try BinaryRunner().run(
        ["status", "--store", path, "--max-age", "7d", "--tpm", tcti] + extra,
        environment: environment, timeout: childBound)
      #expect(!result.timedOut, "status --tpm \(tcti) outlived \(childBound)")
      return result
    }

    func remove() { scratch.remove() }
  }

  @Test func anEndpointThatNeverAnswersIsRefusedWithinTheLimit() throws {
    let store = try Store()
    defer { store.remove() }
    let endpoint = try SilentTPMEndpoint()
    defer { endpoint.close() }

    let json = try store.status(tcti: endpoint.tcti, ["--tpm-timeout", "1s", "--json"])
    #expect(json.exitCode == 1, "\(json.standardOutput) \(json.standardError)")
    let object = try json.jsonObject()
    #expect(object["reasons"] as? [String] == ["tpm_unavailable"], "\(json.standardOutput)")
    let error = try #require(object["tpm_error"] as? String)
    #expect(error.hasPrefix("tpm_timed_out: "), "\(error)")
    #expect(error.contains("within 1s"), "\(error)")
    #expect(
      json.elapsed >= .seconds(1) && json.elapsed < .seconds(1) + Self.slack, "\(json.elapsed)")

    // The text output, with the default limit (5 s).
    let text = try store.status(tcti: endpoint.tcti)
    #expect(text.exitCode == 1)
    #expect(text.standardOutput.contains("tpm_error: tpm_timed_out: "), "\(text.standardOutput)")
    #expect(text.standardError.isEmpty, "\(text.standardError)")
    #expect(
      text.elapsed >= .seconds(5) && text.elapsed < .seconds(5) + Self.slack, "\(text.elapsed)")

    // read refuses on standard error and serves nothing.
    let read = try BinaryRunner().run(
      [
        "read", "--store", store.path, "--max-age", "7d", "--tpm", endpoint.tcti, "--tpm-timeout",
        "1s", "token",
      ], timeout: Self.childBound)
    #expect(read.exitCode == 1, "\(read.standardError)")
    #expect(read.standardOutput.isEmpty, "no byte of the item is served")
    #expect(read.standardError.contains("did not answer in time"), "\(read.standardError)")
    #expect(read.standardError.contains("tpm_timed_out"), "\(read.standardError)")
    #expect(read.elapsed < .seconds(1) + Self.slack, "\(read.elapsed)")
  }

  @Test(.enabled(if: SwtpmProcess.isAvailable, "needs swtpm and tpm2-tools (swtpm, tpm2_shutdown)"))
  func aTPMHeldByAnotherClientIsRefusedWithinTheLimitThenUsedAgain() throws {
    let store = try Store()
    defer { store.remove() }
    let swtpm = try SwtpmProcess()
    defer { swtpm.stop() }
    let holder = try HeldTCPConnection(port: swtpm.port)
    let held = try store.status(tcti: swtpm.tcti, ["--tpm-timeout", "1s", "--json"])
    #expect(held.exitCode == 1, "\(held.standardOutput) \(held.standardError)")
    #expect(try held.jsonObject()["reasons"] as? [String] == ["tpm_unavailable"])
    #expect(
      (try held.jsonObject()["tpm_error"] as? String)?.hasPrefix("tpm_timed_out: ") == true,
      "\(held.standardOutput)")
    #expect(held.elapsed < .seconds(1) + Self.slack, "\(held.elapsed)")

    holder.close()
    let released = try store.status(tcti: swtpm.tcti, ["--json"])
    // Signed in without a TPM: trusted time has no anchor, and the TPM reading is shown.
    #expect(released.exitCode == 0, "\(released.standardOutput) \(released.standardError)")
    #expect(try released.jsonObject()["tpm_error"] is NSNull, "\(released.standardOutput)")
  }

  @Test func aPortWithNothingListeningIsRefusedAtOnceAndQuietly() throws {
    let store = try Store()
    defer { store.remove() }
    let tcti = "swtpm:host=127.0.0.1,port=\(try SilentTPMEndpoint.unusedPort())"
    let quiet = try store.status(tcti: tcti, environment: ["TSS2_LOG": ""])
    #expect(quiet.exitCode == 1, "\(quiet.standardOutput)")
    #expect(
      quiet.standardOutput.contains("tpm_error: tpm_unavailable: "), "\(quiet.standardOutput)")
    #expect(quiet.elapsed < Self.slack, "\(quiet.elapsed)")
    // Nothing of the TPM Software Stack's log (status refuses on standard output alone).
    #expect(quiet.standardError.isEmpty, "\(quiet.standardError)")

    // A user who asks for the log gets it.
    let logged = try store.status(tcti: tcti, environment: ["TSS2_LOG": "all+warning"])
    #expect(logged.exitCode == 1)
    #expect(logged.standardError.contains("WARNING:tcti:"), "\(logged.standardError)")
  }

  @Test(arguments: ["0s", "-1s", "2h", "soon"])
  func aTimeLimitOutOfRangeIsAUsageError(value: String) throws {
    let result = try BinaryRunner().run(
      [
        "status", "--store", "/nonexistent", "--max-age", "7d", "--tpm", "device:/dev/tpmrm0",
        "--tpm-timeout", value,
      ], timeout: Self.childBound)
    #expect(result.exitCode == 64, "\(result.standardError)")
    #expect(result.standardError.hasPrefix("error: --tpm-timeout: "), "\(result.standardError)")
  }

  @Test func aTimeLimitWithoutATPMIsAUsageError() throws {
    let result = try BinaryRunner().run(
      ["status", "--store", "/nonexistent", "--max-age", "7d", "--tpm-timeout", "1s"],
      timeout: Self.childBound)
    #expect(result.exitCode == 64, "\(result.standardError)")
    #expect(
      result.standardError.hasPrefix("error: --tpm-timeout needs --tpm"), "\(result.standardError)")
  }
}
