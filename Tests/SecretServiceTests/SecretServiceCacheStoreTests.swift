#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import OfflineTTLTesting
  import Testing

  /// The cache store against a real gnome-keyring-daemon (Scripts/test.sh starts a private one).
  @Suite struct SecretServiceCacheStoreTests {
    func makeStore(_ name: String = #function) throws -> SecretServiceCacheStore {
      SecretServiceCacheStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: SecretServiceTestSupport.uniqueApplicationID(name),
          lockDirectory: try SecretServiceTestSupport.temporaryDirectory(),
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func passesTheCacheItemStoreConformanceSuite() throws {
      let locks = try SecretServiceTestSupport.temporaryDirectory()
      // Each check gets a fresh application id; the previous check's secrets are removed first,
      // since every secret written makes the daemon rewrite the whole keyring file.
      var previous: SecretServiceCacheStore?
      func removeAll(_ store: SecretServiceCacheStore?) throws {
        var changes = CacheChanges()
        changes.removeAll()
        _ = try store?.commit(changes)
      }
      try CacheItemStoreConformance.check {
        try removeAll(previous)
        let store = SecretServiceCacheStore(
          configuration: try SecretServiceStoreConfiguration(
            applicationID: SecretServiceTestSupport.uniqueApplicationID("cacheConformance"),
            lockDirectory: locks, timeout: SecretServiceTestSupport.callLimit,
            lockTimeout: SecretServiceTestSupport.lockLimit))
        previous = store
        return store
      }
      try removeAll(previous)
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func anUnreadableItemIsLeftAloneAndOnlyACommitReplacesIt() throws {
      let store = try makeStore()
      let key = CacheItemKey("token")
      var changes = CacheChanges()
      changes.write(key, Data("good".utf8), writtenAt: .at(100))
      changes.write(CacheItemKey("other"), Data("x".utf8), writtenAt: .at(50))
      try store.commit(changes)
      try SecretServiceTestSupport.storeRawSecret(
        "not an item", applicationID: store.configuration.applicationID, kind: "item",
        key: "token")

      do {
        _ = try store.item(forKey: key)
        Issue.record("a corrupt item was read")
      } catch {
        #expect(error.code == .itemUnreadable)
        #expect(error.key == key)
      }
      #expect(try store.keys().map(\.rawValue) == ["other", "token"], "nothing was deleted")
      #expect(try store.item(forKey: CacheItemKey("other"))?.writtenAt == .at(50))

      var rewrite = CacheChanges()
      rewrite.write(key, Data("fresh".utf8), writtenAt: .at(200))
      try store.commit(rewrite)
      #expect(try store.item(forKey: key)?.payload == Data("fresh".utf8))
      #expect(try store.summary() == ItemTimeSummary(count: 2, oldest: .at(50), newest: .at(200)))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func anInterruptedCommitsDirtyIndexIsRebuiltFromTheItems() throws {
      let store = try makeStore()
      var changes = CacheChanges()
      changes.write(CacheItemKey("a"), Data("a".utf8), writtenAt: .at(10))
      changes.write(CacheItemKey("b"), Data("b".utf8), writtenAt: .at(30))
      try store.commit(changes)
      // As a crash mid-commit leaves it: marked dirty, listing a stale time.
      let body = "offline-ttl-index 1\nstate dirty\n999000000000\ta\n"
      try SecretServiceTestSupport.storeRawSecret(
        body + "crc32 " + SecretServiceTestSupport.crc32Hex(body) + "\n",
        applicationID: store.configuration.applicationID, kind: "index", key: "items")
      #expect(try store.summary() == ItemTimeSummary(count: 2, oldest: .at(10), newest: .at(30)))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func itemsAndTheMarkOfOneApplicationDoNotMix() throws {
      let store = try makeStore()
      let marks = SecretServiceClockMarkStore(configuration: store.configuration)
      _ = try marks.resetAfterOnlineSignIn(now: .at(1))
      #expect(try store.keys().isEmpty)
      #expect(try store.summary() == .empty)
      var changes = CacheChanges()
      changes.removeAll()
      changes.write(CacheItemKey("mark"), Data(), writtenAt: .at(2))
      try store.commit(changes)
      #expect(try marks.read().mark == .at(1), "removeAll deletes items only, never the mark")
    }

    /// Sign-ins that overlap stamp their items under the items' lock file, after the sign-ins
    /// they waited for (outside test 6, F2: they were stamped before it, and reads were refused
    /// as `too_old` right after the last sign-in).
    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func overlappingSignInsStampAfterTheSignInsTheyWaitedFor() throws {
      let store = try makeStore()
      try OverlappingWritersCheck.signIns(
        threads: 6, cache: store,
        marks: SecretServiceClockMarkStore(configuration: store.configuration))
    }

    /// Writes of one session that overlap are each stamped after the writes they waited for.
    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func overlappingSessionWritesStampAfterTheWritesTheyWaitedFor() throws {
      let store = try makeStore()
      try OverlappingWritersCheck.sessionWrites(
        threads: 6, cache: store,
        marks: SecretServiceClockMarkStore(configuration: store.configuration))
    }
  }
#endif
