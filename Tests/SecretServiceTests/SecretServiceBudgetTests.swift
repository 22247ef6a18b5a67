#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  /// One keyring time limit per unit of work, and a keyring that timed out asked only once:
  /// against a stopped daemon a command cost 40-50 s (each of its store operations waited its
  /// own 5 s or more).
  @Suite struct SecretServiceBudgetTests {
    @Test func aBudgetMustBePositive() {
      #expect(throws: InvalidValueError.self) { try SecretServiceBudget(total: .zero) }
      #expect(throws: InvalidValueError.self) { try SecretServiceBudget(total: .seconds(-1)) }
    }

    @Test func aBudgetIsSharedByReference() throws {
      let one = try SecretServiceBudget(total: .seconds(5))
      let other = try SecretServiceBudget(total: .seconds(5))
      var configuration = try SecretServiceStoreConfiguration(
        applicationID: "a", lockDirectory: "/tmp")
      configuration.budget = one
      var copy = configuration
      #expect(copy == configuration)
      copy.budget = other
      #expect(copy != configuration, "another budget, another unit of work")
      #expect(one.remaining == .seconds(5) && !one.hasTimedOut)
    }

    static func configuration(_ budget: SecretServiceBudget, _ name: String = #function) throws
      -> SecretServiceStoreConfiguration
    {
      var configuration = try SecretServiceStoreConfiguration(
        applicationID: SecretServiceTestSupport.uniqueApplicationID(name),
        lockDirectory: try SecretServiceTestSupport.temporaryDirectory() + "/locks",
        timeout: SecretServiceTestSupport.callLimit,
        lockTimeout: SecretServiceTestSupport.lockLimit)
      configuration.budget = budget
      return configuration
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func operationsSpendOneBudgetAndATimeOutIsNotAskedAgain() throws {
      // A generous budget: both operations answer, and each spent some of it.
      let ample = try SecretServiceBudget(total: .seconds(600))
      let store = SecretServiceClockMarkStore(configuration: try Self.configuration(ample))
      _ = try store.resetAfterOnlineSignIn(now: .at(5))
      let afterOne = ample.remaining
      #expect(afterOne < .seconds(600))
      #expect(try store.read().generation == 1)
      #expect(ample.remaining < afterOne)
      #expect(!ample.hasTimedOut)

      // A budget of 1 ns: the first operation is cancelled with timed_out, the next is refused
      // without a call, saying so; another budget on the same secrets still reads them.
      let tiny = try SecretServiceBudget(total: .nanoseconds(1))
      var spent = store.configuration
      spent.budget = tiny
      let starved = SecretServiceClockMarkStore(configuration: spent)
      for attempt in 1...2 {
        do {
          _ = try starved.read()
          Issue.record("attempt \(attempt) read past a 1 ns budget")
        } catch {
          #expect(error.unusableReason == .timedOut, "attempt \(attempt): \(error)")
          if attempt == 2 { #expect("\(error)".contains("not asked again"), "\(error)") }
        }
      }
      #expect(tiny.hasTimedOut && tiny.remaining == .zero)
      var fresh = store.configuration
      fresh.budget = try SecretServiceBudget(total: .seconds(600))
      #expect(try SecretServiceClockMarkStore(configuration: fresh).read().generation == 1)
    }

    /// Every keyring command against a gnome-keyring-daemon stopped with `SIGSTOP` (the bus
    /// still answers, the provider never does), in a keyring session of its own (`demo --seal
    /// secret-service` included): each fails
    /// with `timed_out` in less than twice the 5 s limit, and after `SIGCONT` nothing is lost.
    /// Each runs with `G_DEBUG=fatal-criticals`: a GLib CRITICAL on the cancel path (libsecret's
    /// search completed its task once per cancelled item load) would abort it.
    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("bash")
          && SecretServiceTestSupport.has("gnome-keyring-daemon")
          && SecretServiceTestSupport.has("timeout"),
        "needs gnome-keyring-daemon, bash and timeout (Debian: gnome-keyring, coreutils)"))
    func aStoppedKeyringCostsACommandOneLimit() throws {
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let store = scratch + "/store"
      let sealed = scratch + "/sealed"
      let input = scratch + "/token.txt"
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let backend = ["--backend", "secret-service"]
      let seal = ["--seal", "secret-service"]
      let commands: [[String]] = [
        ["status", "--store", store, "--max-age", "7d"] + backend,
        ["read", "--store", store, "--max-age", "7d", "token"] + backend,
        ["mark", "show", "--store", store] + backend,
        ["sign-in", "--store", store, "--put", "token=\(input)"] + backend,
        ["status", "--store", sealed, "--max-age", "7d"] + seal,
        ["read", "--store", sealed, "--max-age", "7d", "token"] + seal,
        // Its key's load and its clean-up (the key's deletion) share the one budget too: they
        // took 5 s each, 20 s for the demo.
        ["demo"] + seal,
      ]
      var script = """
        set -u
        "$TOOL" sign-in --store "$STORE" --put "token=$INPUT" --backend secret-service >/dev/null
        echo "signed-in exit $?"
        "$TOOL" sign-in --store "$SEALED" --put "token=$INPUT" --seal secret-service >/dev/null
        echo "sealed exit $?"
        daemon=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus \\
          /org/freedesktop/DBus org.freedesktop.DBus.GetConnectionUnixProcessID \\
          string:org.freedesktop.secrets | awk '/uint32/ { print $2 }')
        echo "daemon=$daemon"
        kill -STOP "$daemon"
        """
      for (index, arguments) in commands.enumerated() {
        let quoted = arguments.map { "'" + $0 + "'" }.joined(separator: " ")
        script += """

          start=$(date +%s%N)
          G_DEBUG=fatal-criticals timeout -s KILL 120 "$TOOL" \(quoted) >"$SCRATCH/out" \
            2>"$SCRATCH/err"
          status=$?
          end=$(date +%s%N)
          echo "== \(index) exit=$status ms=$(( (end - start) / 1000000 ))"
          cat "$SCRATCH/out" "$SCRATCH/err"
          echo "-- end"
          """
      }
      script += """

        kill -CONT "$daemon"
        echo "== resumed"
        "$TOOL" read --store "$STORE" --max-age 7d token --backend secret-service
        echo " exit=$?"
        "$TOOL" read --store "$SEALED" --max-age 7d token --seal secret-service
        echo " exit=$?"
        """
      let output = try SecretServiceTestSupport.run(
        root.appendingPathComponent("Scripts/with-secret-service.sh").path, [bash, "-c", script],
        environment: [
          "TOOL": SecretServiceTestSupport.product("offline-ttl"), "STORE": store,
          "SEALED": sealed, "INPUT": input, "SCRATCH": scratch,
        ])
      let text = output.standardOutput
      try #require(text.contains("signed-in exit 0"), "\(text)\n\(output.standardError)")
      try #require(text.contains("sealed exit 0"), "\(text)")
      for (index, arguments) in commands.enumerated() {
        let block = try #require(
          text.components(separatedBy: "== \(index) ").dropFirst().first?
            .components(separatedBy: "-- end").first, "\(index): \(text)")
        let label = arguments.prefix(2).joined(separator: " ")
        let milliseconds = try #require(
          block.split(separator: " ").first { $0.hasPrefix("ms=") }
            .flatMap { Int($0.dropFirst(3).prefix { $0.isNumber }) }, "\(block)")
        // One limit of 5 s (the watchdog's) and the process's own start, never one per store
        // operation (40-50 s before); under twice the limit.
        #expect(milliseconds < 10_000, "\(label): \(milliseconds) ms\n\(block)")
        #expect(block.contains("timed_out"), "\(label): \(block)")
        let exit = try #require(Int(block.dropFirst("exit=".count).prefix { $0.isNumber }))
        #expect(exit != 0 && exit < 128, "\(label): a refusal, not a signal: \(block)")
        #expect(!block.contains("CRITICAL"), "\(label): \(block)")
      }
      let resumed = try #require(text.components(separatedBy: "== resumed\n").last)
      #expect(
        resumed == "secret-token exit=0\nsecret-token exit=0\n", "nothing was lost: \(resumed)")
    }
  }
#endif
