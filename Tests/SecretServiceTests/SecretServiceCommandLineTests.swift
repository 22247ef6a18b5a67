#if SecretService
  import Foundation
  import Testing

  /// The rollback-twice scenario end to end: the built `offline-ttl` with
  /// `--backend secret-service`, each run's wall clock frozen by libfaketime
  /// (`FAKETIME_DONT_FAKE_MONOTONIC=1`: the boot clock and the store's watchdog stay real).
  @Suite struct SecretServiceCommandLineTests {
    static let day: Int64 = 86_400
    static let library = SecretServiceTestSupport.fakeTimeLibrary

    static func run(_ arguments: [String], at seconds: Int64?) throws
      -> SecretServiceTestSupport.Output
    {
      var environment: [String: String?] = [:]
      if let seconds, let library {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        environment = [
          "LD_PRELOAD": library,
          "FAKETIME": formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))),
          "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1", "TZ": "UTC",
        ]
      }
      return try SecretServiceTestSupport.run(
        SecretServiceTestSupport.product("offline-ttl"), arguments, environment: environment)
    }

    static func json(_ output: SecretServiceTestSupport.Output) throws -> [String: Any] {
      let data = Data(output.standardOutput.utf8)
      return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing),
      .enabled(
        if: Self.library != nil,
        "needs libfaketime.so.1 (Debian: faketime)"))
    func rollbackTwiceIsRefusedKeepsTheItemAndSignInRecovers() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      let store = scratch + "/store"
      let input = scratch + "/token.txt"
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let backend = ["--backend", "secret-service"]
      let now = Int64(Date().timeIntervalSince1970)

      let signIn = try Self.run(
        ["sign-in", "--store", store, "--put", "token=\(input)"] + backend, at: nil)
      #expect(signIn.status == 0, "\(signIn.standardError)")
      #expect(
        !FileManager.default.fileExists(atPath: store + "/cache"), "no item is kept in files")
      let itemBefore = try SecretServiceTestSupport.itemSecret(store: store, key: "token")

      // Two days ahead with a one-day max age: too old; the mark rises there.
      let ahead = try Self.run(
        ["status", "--store", store, "--max-age", "1d", "--json"] + backend, at: now + 2 * Self.day)
      #expect(ahead.status == 1)
      #expect(try Self.json(ahead)["reasons"] as? [String] == ["too_old"])
      let high = (now + 2 * Self.day) * 1_000_000_000
      #expect((try Self.json(ahead)["mark_ns"] as? NSNumber)?.int64Value == high)

      // Rollback 1: one day ahead, after the write but behind the mark.
      let behind = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"] + backend, at: now + Self.day)
      #expect(behind.status == 1)
      #expect(try Self.json(behind)["reasons"] as? [String] == ["clock_behind_mark"])

      // Rollback 2: before the write.
      let before = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"] + backend, at: now - Self.day)
      #expect(before.status == 1)
      let reasons = try #require(try Self.json(before)["reasons"] as? [String])
      #expect(reasons.contains("clock_behind_mark"))
      #expect(reasons.contains("item_from_future"))

      // Read offline: refused; the mark still holds; the item's secret is byte for byte intact.
      let read = try Self.run(
        ["read", "--store", store, "--max-age", "30d", "token"] + backend, at: now - Self.day)
      #expect(read.status == 1)
      #expect(read.standardOutput == "")
      #expect(read.standardError.hasPrefix("error: refused: expired: clock_behind_mark"))
      let show = try Self.run(
        ["mark", "show", "--dir", store, "--unit", "ns"] + backend, at: nil)
      #expect(show.standardOutput == "mark \(high) generation 1\n")
      #expect(try SecretServiceTestSupport.itemSecret(store: store, key: "token") == itemBefore)

      // An online sign-in under the real clock recovers.
      let again = try Self.run(["sign-in", "--store", store] + backend, at: nil)
      #expect(again.status == 0, "\(again.standardError)")
      let readAgain = try Self.run(
        ["read", "--store", store, "--max-age", "1d", "token"] + backend, at: nil)
      #expect(readAgain.status == 0, "\(readAgain.standardError)")
      #expect(readAgain.standardOutput == "secret-token")
    }

    /// Every subcommand that opens a store, as the keyring backend meets an unreachable keyring:
    /// each exits 74 (the store cannot be used) naming the typed reason on standard error;
    /// `status` and the JSON outputs still print the decision, `expired`.
    static func unreachableKeyringCommands(store: String, input: String) -> [[String]] {
      let backend = ["--backend", "secret-service"]
      return [
        ["status", "--store", store, "--max-age", "7d"],
        ["status", "--store", store, "--max-age", "7d", "--json"],
        ["read", "--store", store, "--max-age", "7d", "token"],
        ["read", "--store", store, "--max-age", "7d", "--json", "token"],
        ["sign-in", "--store", store, "--put", "token=\(input)"],
        ["mark", "show", "--store", store],
        ["mark", "observe", "--store", store, "--now", "1800000000"],
        ["mark", "reset", "--store", store, "--now", "1800000000"],
      ].map { $0 + backend }
    }

    /// Checks one command's result against ``unreachableKeyringCommands(store:input:)``.
    static func expectUnreachable(
      _ output: SecretServiceTestSupport.Output, _ arguments: [String], reason: String
    ) {
      let label = arguments.prefix(2).joined(separator: " ")
      #expect(output.status == 74, "\(arguments): \(output.standardError)")
      #expect(
        output.standardError.contains("store_unusable (\(reason))"),
        "\(label): \(output.standardError)")
      if arguments.contains("--json") {
        #expect(
          output.standardOutput.hasPrefix(#"{"status":"expired""#),
          "\(label): \(output.standardOutput)")
        #expect(output.standardOutput.contains(reason), "\(label): \(output.standardOutput)")
      } else if arguments[0] == "status" {
        #expect(output.standardOutput.hasPrefix("status: expired\n"), "\(label)")
        #expect(output.standardOutput.contains("mark_error: store_unusable (\(reason))"))
      } else {
        #expect(output.standardOutput == "", "\(label): \(output.standardOutput)")
      }
    }

    /// No session bus (its address names nothing): runs wherever the trait is built.
    @Test func everySubcommandExits74WithTheReasonWhenThereIsNoSessionBus() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let store = scratch + "/store"
      try FileManager.default.createDirectory(
        atPath: store, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      let input = scratch + "/token.txt"
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      for arguments in Self.unreachableKeyringCommands(store: store, input: input) {
        let output = try SecretServiceTestSupport.run(
          SecretServiceTestSupport.product("offline-ttl"), arguments,
          environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(scratch)/no-such-bus", "DISPLAY": nil,
          ])
        Self.expectUnreachable(output, arguments, reason: "no_session_bus")
      }
    }

    /// A locked collection, in a keyring of its own (locking the shared one would disturb the
    /// other tests): a sign-in, the collection locked, every subcommand, then unlocked and read.
    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("bash")
          && SecretServiceTestSupport.has("gnome-keyring-daemon"),
        "needs gnome-keyring-daemon and bash (Debian: gnome-keyring)"))
    func everySubcommandExits74WithTheReasonWhileTheKeyringIsLocked() throws {
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let store = scratch + "/store"
      let input = scratch + "/token.txt"
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let locks = scratch + "/probe-locks"
      try FileManager.default.createDirectory(
        atPath: locks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      let commands = Self.unreachableKeyringCommands(store: store, input: input)
      // One block per command: "== <index>", its standard output, "-- exit <n>", its standard
      // error, "-- end".
      var script = """
        set -u
        "$TOOL" sign-in --store "$STORE" --put "token=$INPUT" --backend secret-service >/dev/null
        echo "signed-in exit $?"
        "$PROBE" org.offlinettl.tests.cli-locked "$LOCKS" lock
        """
      for (index, arguments) in commands.enumerated() {
        let quoted = arguments.map { "'" + $0 + "'" }.joined(separator: " ")
        script += """

          echo "== \(index)"
          "$TOOL" \(quoted) 2>"$STORE.err"
          echo "-- exit $?"
          cat "$STORE.err"
          echo "-- end"
          """
      }
      script += """

        printf offline-ttl-test | HOME="$OFFLINE_TTL_KEYRING_HOME" \\
          gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1
        "$OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE" 60
        echo "== unlocked"
        "$TOOL" read --store "$STORE" --max-age 7d token --backend secret-service
        status=$?
        echo
        echo "-- exit $status"
        """
      let output = try SecretServiceTestSupport.run(
        root.appendingPathComponent("Scripts/with-secret-service.sh").path, [bash, "-c", script],
        environment: [
          "TOOL": SecretServiceTestSupport.product("offline-ttl"),
          "PROBE": SecretServiceTestSupport.product("offline-ttl-secret-probe"),
          "STORE": store, "INPUT": input, "LOCKS": locks,
        ])
      let text = output.standardOutput
      try #require(text.contains("signed-in exit 0"), "\(text)\n\(output.standardError)")
      try #require(text.contains("ok locked"), "\(text)")
      for (index, arguments) in commands.enumerated() {
        let block = try #require(
          text.components(separatedBy: "== \(index)\n").dropFirst().first?
            .components(separatedBy: "-- end").first, "\(index): \(text)")
        let parts = block.components(separatedBy: "-- exit ")
        try #require(parts.count == 2, "\(block)")
        let lines = parts[1].split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let result = SecretServiceTestSupport.Output(
          status: Int32(lines[0]) ?? -1, standardOutput: parts[0],
          standardError: lines.count > 1 ? String(lines[1]) : "")
        Self.expectUnreachable(result, arguments, reason: "collection_locked")
      }
      let unlocked = try #require(text.components(separatedBy: "== unlocked\n").last)
      #expect(unlocked.hasPrefix("secret-token\n-- exit 0"), "nothing was lost: \(unlocked)")
    }

    @Test func anUnknownBackendIsAUsageError() throws {
      let run = try Self.run(
        ["status", "--store", "/tmp", "--max-age", "1d", "--backend", "cloud"], at: nil)
      #expect(run.status == 64)
      #expect(
        run.standardError.hasPrefix(
          "error: --backend: unknown backend 'cloud' (use file or secret-service)"))
    }

    @Test func helpListsTheBackendOption() throws {
      for subcommand in ["status", "read", "sign-in", "mark"] {
        let run = try Self.run([subcommand, "--help"], at: nil)
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("--backend <file|secret-service>"), "\(subcommand)")
      }
    }
  }
#endif
