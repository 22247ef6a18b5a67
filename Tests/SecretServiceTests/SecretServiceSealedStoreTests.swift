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
        cache: DirectoryCacheStore(at: store, sealing: provider),
        marks: FileClockMarkStore(atPath: store, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: clock)
    }

    @Test func theWholeScenarioOnAStoreSealedWithAKeyringKey() throws {
      let root = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: root) }
      let provider = SecretServiceSealingKeyProvider(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: SecretServiceTestSupport.uniqueApplicationID(), lockDirectory: root))
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
      try session.write(try CacheItemKey("token"), Data("secret".utf8))
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
      try renewed.write(try CacheItemKey("token"), Data("renewed".utf8))
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
  }
#endif
