#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  /// The sealing key in a real keyring (Scripts/with-secret-service.sh starts a private one);
  /// the failure cases each in a child process with its own bus, typed and quick.
  @Suite(
    .enabled(
      if: ProcessInfo.processInfo.environment[SecretServiceTestSupport.readyVariable] == "1",
      "needs a private gnome-keyring-daemon session (Scripts/with-secret-service.sh; Debian: gnome-keyring, dbus, libsecret-1-dev)"
    ))
  struct SecretServiceSealingKeyProviderTests {
    let probe = SecretServiceTestSupport.product("offline-ttl-secret-probe")

    func makeProvider(_ name: String = #function) throws -> SecretServiceSealingKeyProvider {
      SecretServiceSealingKeyProvider(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: SecretServiceTestSupport.uniqueApplicationID(name),
          lockDirectory: try SecretServiceTestSupport.temporaryDirectory() + "/locks",
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
    }

    @Test func aMissingKeyIsRefusedOfflineAndCreatedOnline() throws {
      let provider = try makeProvider()
      do {
        _ = try provider.loadKey()
        Issue.record("loaded a key that does not exist")
      } catch {
        #expect(error.code == .missing)
      }
      let created = try provider.loadOrCreateKey()
      #expect(try provider.loadKey().description == created.description)
      #expect(try provider.loadOrCreateKey().description == created.description)
    }

    @Test func concurrentCreatorsEndWithOneKey() async throws {
      let provider = try makeProvider()
      let checks = await withTaskGroup(of: String?.self) { group in
        for _ in 0..<6 { group.addTask { try? provider.loadOrCreateKey().description } }
        var all: [String?] = []
        for await check in group { all.append(check) }
        return all
      }
      #expect(checks.allSatisfy { $0 != nil })
      #expect(Set(checks.compactMap { $0 }).count == 1)
      #expect(try provider.loadKey().description == checks[0])
    }

    @Test func aSecretOfTheWrongSizeIsRefused() throws {
      let provider = try makeProvider()
      try SecretServiceTestSupport.storeRawSecret(
        "too short", applicationID: provider.configuration.applicationID, kind: "sealing-key",
        key: "store")
      for load in [provider.loadKey, provider.loadOrCreateKey] {
        do {
          _ = try load()
          Issue.record("loaded a 9-byte key")
        } catch {
          #expect(error.code == .wrongSize)
        }
      }
    }

    @Test func aDeletedKeyIsMissingAndOnlyItsOwnIsDeleted() throws {
      let provider = try makeProvider()
      let neighbour = SecretServiceSealingKeyProvider(
        configuration: provider.configuration, name: "neighbour")
      _ = try provider.loadOrCreateKey()
      let kept = try neighbour.loadOrCreateKey()
      #expect(try provider.deleteKey() == 1)
      do {
        _ = try provider.loadKey()
        Issue.record("loaded a deleted key")
      } catch {
        #expect(error.code == .missing)
      }
      #expect(try provider.deleteKey() == 0)
      #expect(try neighbour.loadKey().description == kept.description)
    }

    @Test func noSessionBusIsTypedAndQuick() throws {
      let lockDirectory = try SecretServiceTestSupport.temporaryDirectory()
      for command in ["key-load", "key-create"] {
        let output = try SecretServiceTestSupport.run(
          probe, ["org.offlinettl.tests.nobus", lockDirectory, command],
          environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(lockDirectory)/no-such-bus", "DISPLAY": nil,
          ])
        #expect(output.status == 1)
        #expect(output.standardOutput.hasPrefix("error key_unavailable (no_session_bus): "))
        let elapsed = try #require(output.value("elapsed_ms").flatMap { Int($0) })
        // Quick: under the probe's 10 s call limit (a call that waited for it would say
        // timed_out); loose for a loaded machine.
        #expect(elapsed < 8_000)
      }
    }

    @Test func aLockedKeyringIsTypedQuickAndPromptsNothing() throws {
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      // Its own keyring (locking the shared one would disturb the other tests).
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      let script = """
        set -u
        app=org.offlinettl.tests.lockedkey
        "$PROBE" $app "$LOCKS" key-create
        "$PROBE" $app "$LOCKS" lock
        echo "load-while-locked:"
        "$PROBE" $app "$LOCKS" key-load
        echo "create-while-locked:"
        "$PROBE" $app "$LOCKS" key-create
        printf offline-ttl-test | HOME="$OFFLINE_TTL_KEYRING_HOME" \\
          gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1
        "$OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE" 60
        echo "load-after-unlock:"
        "$PROBE" $app "$LOCKS" key-load
        """
      let output = try SecretServiceTestSupport.run(
        root.appendingPathComponent("Scripts/with-secret-service.sh").path,
        [bash, "-c", script], environment: ["PROBE": probe, "LOCKS": directory])
      let text = output.standardOutput
      let created = try #require(
        text.split(separator: "\n").first { $0.hasPrefix("ok SealingKey(") }, "\(text)")
      let locked = try #require(text.components(separatedBy: "load-while-locked:\n").last)
      #expect(locked.hasPrefix("error key_unavailable (collection_locked): "), "\(text)")
      let creating = try #require(text.components(separatedBy: "create-while-locked:\n").last)
      #expect(creating.hasPrefix("error key_unavailable (collection_locked): "), "\(text)")
      for section in [locked, creating] {
        let elapsed = SecretServiceTestSupport.Output(
          status: 0, standardOutput: section, standardError: ""
        ).value("elapsed_ms").flatMap { Int($0) }
        // Under the probe's 10 s call limit (never a prompt waited on); loose for a loaded
        // machine.
        #expect((elapsed ?? .max) < 8_000)
      }
      // Nothing was lost: after unlocking, the same key loads.
      let after = try #require(text.components(separatedBy: "load-after-unlock:\n").last)
      #expect(after.hasPrefix(String(created)), "\(text)")
    }
  }
#endif
