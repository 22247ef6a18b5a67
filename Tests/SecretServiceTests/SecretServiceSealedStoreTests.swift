#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import OfflineTTLTesting
  import Testing

  /// A file store sealed with a key kept in the keyring: the whole scenario, and the tampering
  /// and key cases that differ from a key file.
  @Suite(
    .enabled(
      if: ProcessInfo.processInfo.environment[SecretServiceTestSupport.readyVariable] == "1",
      "needs a private gnome-keyring-daemon session (Scripts/with-secret-service.sh; Debian: gnome-keyring, dbus, libsecret-1-dev)"
    ))
  struct SecretServiceSealedStoreTests {
    static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

    func gate(
      _ store: String, _ provider: (any SealingKeyProvider)?, clock: ManualWallClock
    ) throws -> OfflineAccessGate {
      OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: store, sealing: provider),
        marks: FileClockMarkStore(atPath: store, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: clock)
    }

    @Test func theWholeScenarioOnAStoreSealedWithAKeyringKey() throws {
      let root = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: root) }
      let provider = SecretServiceSealingKeyProvider(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: SecretServiceTestSupport.uniqueApplicationID(), lockDirectory: root,
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
      let clock = ManualWallClock(Self.start)
      let store = root + "/store"
      let gate = try gate(store, provider, clock: clock)
      do {
        _ = try provider.loadKey()
        Issue.record("a key exists before the first sign-in")
      } catch {
        #expect(error.code == .missing)
      }
      let session = try gate.beginOnlineSession()
      try session.write(CacheItemKey("token"), Data("secret".utf8))
      #expect(gate.checkEligibility().status == .fresh)
      clock.advance(by: .seconds(86_401))
      #expect(gate.checkEligibility().reasons.contains(.tooOld))
      for _ in 0..<2 {
        clock.moveBack(by: .seconds(86_400))
        let decision = gate.checkEligibility()
        #expect(decision.status == .expired)
        #expect(decision.reasons.contains(.clockBehindMark))
      }
      let renewed = try gate.beginOnlineSession()
      try renewed.write(CacheItemKey("token"), Data("renewed".utf8))
      guard case .opened(let reader) = gate.openOffline() else {
        Issue.record("refused after the sign-in")
        return
      }
      #expect(try reader.item(forKey: CacheItemKey("token"))?.payload == Data("renewed".utf8))
      // Without the key: key_required; with a file key instead of the keyring's: seal_mismatch.
      let unsealed = try self.gate(store, nil, clock: clock).checkEligibility()
      #expect((unsealed.markError ?? unsealed.cacheError)?.code == .keyRequired)
      let file = FileSealingKeyProvider(path: root + "/other.key")
      _ = try file.loadOrCreateKey()
      let other = try self.gate(store, file, clock: clock).checkEligibility()
      #expect((other.markError ?? other.cacheError)?.code == .sealMismatch)
    }

    /// A keyring key whose lock directory is the store directory itself (as the command-line
    /// tool configures it): the key's lock file is made before the store, and the first sign-in
    /// still makes the store there (it was refused as "not a store directory"); the lock file
    /// stays beside `cache/` and the clock-mark files, and the next sign-in and check use them.
    @Test func theFirstSignInMakesTheStoreBesideTheKeysLockFile() throws {
      let root = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: root) }
      let store = root + "/store"
      let applicationID = SecretServiceTestSupport.uniqueApplicationID()
      let provider = SecretServiceSealingKeyProvider(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: applicationID, lockDirectory: store,
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
      let clock = ManualWallClock(Self.start)
      let gate = try gate(store, provider, clock: clock)
      for payload in ["first", "second"] {
        let session = try gate.beginOnlineSession()
        try session.write(CacheItemKey("token"), Data(payload.utf8))
        guard case .opened(let reader) = gate.openOffline() else {
          Issue.record("refused after the sign-in with \(payload)")
          return
        }
        #expect(try reader.item(forKey: CacheItemKey("token"))?.payload == Data(payload.utf8))
      }
      let names = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
      let lock = "secret-service." + applicationID + ".sealing-key.lock"
      #expect(names == ["cache", "clock-mark", "clock-mark.lock", lock].sorted(), "\(names)")
    }

    /// The keyring key cases on the built `offline-ttl` (`--seal secret-service`), in a keyring of
    /// their own (locking the shared one would disturb the other tests): with no session bus and
    /// with the keyring locked, `read` is refused with `key_unavailable` and the keyring's reason,
    /// exit 1, at once, and no byte of the store changes; after unlocking, the same key reads.
    @Test func keyringKeyCasesOnTheBinaryAreTypedQuickAndChangeNothing() throws {
      let bash = try #require(SecretServiceTestSupport.which("bash"))
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let payload = directory + "/token.txt"
      try Data("keyring-sealed".utf8).write(to: URL(fileURLWithPath: payload))
      let script = """
        set -u
        snapshot() { find "$STORE" -type f -exec sha256sum {} + | sort; }
        now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
        read_token() {
          start=$(now_ms)
          "$TOOL" read --store "$STORE" --seal secret-service --max-age 7d token 2>&1
          echo " exit=$? ms=$(( $(now_ms) - start ))"
        }
        "$TOOL" sign-in --store "$STORE" --seal secret-service --put token="$PAYLOAD" >/dev/null \\
          || echo "sign-in failed"
        before=$(snapshot)
        echo "== no-bus"
        DBUS_SESSION_BUS_ADDRESS="unix:path=$LOCKS/no-such-bus" read_token
        "$PROBE" org.offlinettl.tests.sealedlock "$LOCKS" lock >/dev/null
        echo "== locked"
        read_token
        [ "$(snapshot)" = "$before" ] && echo "bytes-unchanged"
        printf offline-ttl-test | HOME="$OFFLINE_TTL_KEYRING_HOME" \\
          gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1
        "$OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE" 60
        echo "== unlocked"
        read_token
        """
      let output = try SecretServiceTestSupport.run(
        root.appendingPathComponent("Scripts/with-secret-service.sh").path, [bash, "-c", script],
        environment: [
          "TOOL": SecretServiceTestSupport.product("offline-ttl"),
          "PROBE": SecretServiceTestSupport.product("offline-ttl-secret-probe"),
          "STORE": directory + "/store", "PAYLOAD": payload, "LOCKS": directory,
        ])
      let text = output.standardOutput
      /// The output of one step, its lines joined by spaces.
      func section(_ name: String) -> String {
        let blocks = text.components(separatedBy: "== ")
        guard let block = blocks.first(where: { $0.hasPrefix(name + "\n") }) else { return "" }
        return block.dropFirst(name.count + 1).split(separator: "\n").joined(separator: " ")
      }
      func milliseconds(_ line: String) -> Int {
        line.split(separator: " ").first { $0.hasPrefix("ms=") }.flatMap { Int($0.dropFirst(3)) }
          ?? .max
      }
      #expect(!text.contains("sign-in failed"), "\(text) \(output.standardError)")
      for (name, reason) in [("no-bus", "no_session_bus"), ("locked", "collection_locked")] {
        let line = section(name)
        #expect(line.contains("key_unavailable"), "\(name): \(text)")
        #expect(line.contains(reason), "\(name): \(text)")
        #expect(line.contains(" exit=1 ms="), "\(name): \(text)")
        // At once: never the 30 s wait for the lock file. (A call that waited out its 5 s
        // deadline would say `timed_out`, not the keyring's reason, checked above.) The bound
        // is loose because one run of the binary takes seconds on a loaded machine.
        #expect(milliseconds(line) < 20_000, "\(name): \(text)")
      }
      #expect(text.contains("bytes-unchanged"), "\(text)")
      #expect(section("unlocked").hasPrefix("keyring-sealed exit=0 ms="), "\(text)")
    }
  }
#endif
