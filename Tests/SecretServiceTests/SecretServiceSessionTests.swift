#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  /// Connection failures, each in a child process pointed at another bus: the typed error comes
  /// quickly (under 2 s, the bound), the operation refuses, and nothing is lost.
  @Suite struct SecretServiceSessionTests {
    let probe = SecretServiceTestSupport.product("offline-ttl-secret-probe")

    func runProbe(
      _ arguments: [String], environment: [String: String?] = [:]
    ) throws -> SecretServiceTestSupport.Output {
      try SecretServiceTestSupport.run(probe, arguments, environment: environment)
    }

    @Test func noSessionBusIsTypedAndQuick() throws {
      let lockDirectory = try SecretServiceTestSupport.temporaryDirectory()
      let output = try runProbe(
        ["org.offlinettl.tests.nobus", lockDirectory, "observe", "1000000000"],
        environment: [
          "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(lockDirectory)/no-such-bus", "DISPLAY": nil,
        ])
      #expect(output.status == 1)
      #expect(output.standardOutput.hasPrefix("error store_unusable (no_session_bus): "))
      let elapsed = try #require(output.value("elapsed_ms").flatMap { Int($0) })
      // Quick: under the probe's 10 s call limit (a call that waited for it would also say
      // timed_out, not no_session_bus); loose for a loaded machine.
      #expect(elapsed < 8_000)
    }

    /// A session bus that can activate nothing: no service directories.
    static func writeBusConfig(in directory: String) throws -> String {
      let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
      try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
      return directory + "/bus.conf"
    }

    /// A python3 that can `import dbus`, or nil.
    static let pythonWithDBus = ["/usr/bin/python3", SecretServiceTestSupport.which("python3")]
      .compactMap({ $0 })
      .first(where: {
        (try? SecretServiceTestSupport.run($0, ["-c", "import dbus"]).status) == 0
      })

    /// Runs `commands` (bash) on a private session bus (``writeBusConfig(in:)``) where a fake
    /// provider owns the Secret Service's name and never reads its messages, so every call to it
    /// hangs: the provider starts first, `commands` run once it owns the name (or after 60 s of
    /// asking), and it is killed after them.
    static func runWithNeverAnsweringProvider(
      _ commands: String, in directory: String, environment: [String: String]
    ) throws -> SecretServiceTestSupport.Output {
      let runSession = try #require(SecretServiceTestSupport.which("dbus-run-session"))
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      let python = try #require(Self.pythonWithDBus)
      let script = """
        "$PYTHON" -c 'import dbus, time
        bus = dbus.SessionBus()
        bus.request_name("org.freedesktop.secrets")
        time.sleep(600)' &
        for _ in $(seq 1200); do
          dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
            org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null \\
            | grep -q "boolean true" && break
          sleep 0.05
        done
        \(commands)
        kill %1
        """
      let config = try writeBusConfig(in: directory)
      return try SecretServiceTestSupport.run(
        runSession, ["--config-file=\(config)", "--", bash, "-c", script],
        environment: environment.merging(["PYTHON": python]) { $1 })
    }

    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("dbus-run-session") && SecretServiceTestSupport.has("bash")
          && Self.pythonWithDBus != nil,
        "needs dbus-run-session, bash and python3-dbus (Debian: dbus, python3-dbus)"))
    func aProviderThatNeverAnswersIsCancelledEvenUnderLibfaketime() throws {
      // A fake provider owns the name and never reads its messages: every call hangs. The
      // probe runs under libfaketime two days back when it is installed, where Dispatch and
      // Task.sleep timers never fire; the watchdog must cancel the call anyway.
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      let fakeTime = SecretServiceTestSupport.fakeTimeLibrary
      if fakeTime == nil {
        print("note: faketime (libfaketime.so.1) is not installed; probe runs unfaked")
      }
      let output = try Self.runWithNeverAnsweringProvider(
        """
        echo "faked_seconds=$(LD_PRELOAD="$FAKE_PRELOAD" FAKETIME=-2d date +%s)"
        OFFLINE_TTL_PROBE_TIMEOUT_MS=1000 LD_PRELOAD="$FAKE_PRELOAD" FAKETIME=-2d \\
          "$PROBE" org.offlinettl.tests.hang "$LOCKS" read
        """, in: directory,
        environment: ["PROBE": probe, "LOCKS": directory, "FAKE_PRELOAD": fakeTime ?? ""])
      if fakeTime != nil {
        // The probe really ran two days back (the preload took effect).
        let faked = try #require(output.value("faked_seconds").flatMap { Int64($0) })
        #expect(Int64(Date().timeIntervalSince1970) - faked > 86_400, "\(output.standardOutput)")
      }
      #expect(
        output.standardOutput.split(separator: "\n").contains {
          $0.hasPrefix("error store_unusable (timed_out): ")
        },
        "\(output.standardOutput)\(output.standardError)")
      let elapsed = try #require(output.value("elapsed_ms").flatMap { Int($0) })
      // Cancelled by the watchdog after its 1 s limit: never sooner, and long before the
      // provider goes away (600 s). The upper bound is loose: a loaded machine wakes the
      // watchdog late.
      #expect(elapsed >= 900 && elapsed < 30_000, "cancelled after one to two limits")
    }

    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("dbus-run-session"),
        "needs dbus-run-session (Debian: dbus)"))
    func aBusWithoutAProviderIsTypedAndQuick() throws {
      let runSession = try #require(SecretServiceTestSupport.which("dbus-run-session"))
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      let config = try Self.writeBusConfig(in: directory)
      let output = try SecretServiceTestSupport.run(
        runSession,
        [
          "--config-file=\(config)", "--", probe, "org.offlinettl.tests.noprovider",
          directory, "observe", "1000000000",
        ])
      #expect(output.status == 1)
      #expect(output.standardOutput.hasPrefix("error store_unusable (no_provider): "))
      let elapsed = try #require(output.value("elapsed_ms").flatMap { Int($0) })
      // Quick: under the probe's 10 s call limit (a call that waited for it would also say
      // timed_out, not no_provider); loose for a loaded machine.
      #expect(elapsed < 8_000)
    }

    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("bash")
          && SecretServiceTestSupport.has("gnome-keyring-daemon"),
        "needs gnome-keyring-daemon and bash (Debian: gnome-keyring)"))
    func aLockedCollectionIsTypedQuickNeverPromptsAndLosesNothing() throws {
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      // Its own keyring (locking the shared one would disturb the other tests): write a mark,
      // lock the collection, observe (refused), then unlock by restarting the daemon with the
      // password and read the mark back.
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      let script = """
        set -u
        app=org.offlinettl.tests.locked
        "$PROBE" $app "$LOCKS" reset 5000000000000
        "$PROBE" $app "$LOCKS" lock
        echo "observe-while-locked:"
        "$PROBE" $app "$LOCKS" observe 9000000000000
        echo "read-while-locked:"
        "$PROBE" $app "$LOCKS" read
        printf offline-ttl-test | HOME="$OFFLINE_TTL_KEYRING_HOME" \\
          gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1
        "$OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE" 60
        echo "read-after-unlock:"
        "$PROBE" $app "$LOCKS" read
        """
      let output = try SecretServiceTestSupport.run(
        root.appendingPathComponent("Scripts/with-secret-service.sh").path,
        [bash, "-c", script], environment: ["PROBE": probe, "LOCKS": directory])
      let sections = output.standardOutput.components(separatedBy: "observe-while-locked:\n")
      try #require(sections.count == 2, "\(output.standardOutput)\n\(output.standardError)")
      #expect(sections[0].contains("ok generation=1 mark=5000000000000"))
      #expect(sections[0].contains("ok locked"))
      let parts = sections[1].components(separatedBy: "read-while-locked:\n")
      try #require(parts.count == 2)
      #expect(parts[0].hasPrefix("error store_unusable (collection_locked): "))
      let elapsed = try #require(
        SecretServiceTestSupport.Output(status: 0, standardOutput: parts[0], standardError: "")
          .value("elapsed_ms").flatMap { Int($0) })
      // Under the probe's 10 s call limit (never a prompt waited on); loose for a loaded
      // machine.
      #expect(elapsed < 8_000)
      #expect(parts[1].hasPrefix("error store_unusable (collection_locked): "))
      let after = parts[1].components(separatedBy: "read-after-unlock:\n")
      try #require(after.count == 2, "\(output.standardOutput)")
      #expect(after[1].hasPrefix("ok generation=1 mark=5000000000000"), "nothing was lost")
    }
    /// A provider that never answers, with the watchdog's cancellation swallowed (a preloaded
    /// `g_cancellable_cancel` that does nothing, so the call is never cancelled): the loop that
    /// waits for the call gives up by itself, two call limits and a grace of 1 s after the call
    /// started, with `timed_out` (outside test 6, F6: it waited forever).
    @Test(
      .enabled(
        if: SecretServiceTestSupport.has("dbus-run-session") && SecretServiceTestSupport.has("bash")
          && SecretServiceTestSupport.has("cc") && SecretServiceTestSupport.has("timeout")
          && Self.pythonWithDBus != nil,
        "needs dbus-run-session, bash, cc, timeout, python3-dbus (Debian: dbus, gcc, python3-dbus)"
      ))
    func aProviderThatNeverAnswersIsGivenUpOnWhenTheCancellationIsSwallowed() throws {
      let cc = try #require(SecretServiceTestSupport.which("cc"))
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      try "void g_cancellable_cancel(void *cancellable) { (void) cancellable; }\n".write(
        toFile: directory + "/swallow.c", atomically: true, encoding: .utf8)
      let built = try SecretServiceTestSupport.run(
        cc, ["-shared", "-fPIC", "-o", directory + "/swallow.so", directory + "/swallow.c"])
      try #require(built.status == 0, "\(built.standardError)")
      // The probe is bounded by `timeout` (20 s), so the old loop, which waits forever, fails
      // the test instead of hanging it.
      let output = try Self.runWithNeverAnsweringProvider(
        """
        OFFLINE_TTL_PROBE_TIMEOUT_MS=1000 LD_PRELOAD="$SWALLOW" \\
          timeout -s KILL 20 "$PROBE" org.offlinettl.tests.swallowed "$LOCKS" read
        echo "probe_status=$?"
        """, in: directory,
        environment: ["PROBE": probe, "LOCKS": directory, "SWALLOW": directory + "/swallow.so"])
      let lines = output.standardOutput.split(separator: "\n")
      #expect(
        lines.contains {
          $0.hasPrefix("error store_unusable (timed_out): ") && $0.contains("given up")
        },
        "\(output.standardOutput)\(output.standardError)")
      #expect(output.value("probe_status") == "1", "the probe returned, not killed")
      let elapsed = try #require(output.value("elapsed_ms").flatMap { Int($0) })
      // Two limits of 1 s and the grace of 1 s: never sooner; the upper bound is loose for a
      // loaded machine.
      #expect(elapsed >= 2_900 && elapsed < 15_000, "given up after two limits and the grace")
    }
  }
#endif
