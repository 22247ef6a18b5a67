#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import OfflineTTLTesting
  import Synchronization
  import Testing

  /// The store against a real gnome-keyring-daemon (Scripts/test.sh starts a private one).
  @Suite struct SecretServiceClockMarkStoreTests {
    func makeStore(_ name: String = #function) throws -> SecretServiceClockMarkStore {
      SecretServiceClockMarkStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: SecretServiceTestSupport.uniqueApplicationID(name),
          lockDirectory: try SecretServiceTestSupport.temporaryDirectory() + "/locks",
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func passesTheClockMarkStoreConformanceSuite() throws {
      let locks = try SecretServiceTestSupport.temporaryDirectory()
      try ClockMarkStoreConformance.run(
        ClockMarkStoreConformance.Backend(
          makeEmpty: {
            SecretServiceClockMarkStore(
              configuration: try SecretServiceStoreConfiguration(
                applicationID: SecretServiceTestSupport.uniqueApplicationID("conformance"),
                lockDirectory: locks, timeout: SecretServiceTestSupport.callLimit,
                lockTimeout: SecretServiceTestSupport.lockLimit))
          },
          reopen: { store in
            SecretServiceClockMarkStore(
              configuration: (store as! SecretServiceClockMarkStore).configuration)
          },
          corrupt: { store in
            let applicationID = (store as! SecretServiceClockMarkStore).configuration.applicationID
            try SecretServiceTestSupport.storeRawSecret(
              "garbage\u{0}\u{1}", applicationID: applicationID, kind: "clock-mark", key: "mark")
          }),
        threadObservations: 10)
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func observingWithoutARecordIsAbsentAndCreatesNothing() throws {
      let store = try makeStore()
      #expect(throws: ClockMarkStoreError.self) { try store.read() }
      do {
        _ = try store.observe(now: .at(1_000))
        Issue.record("observed without a record")
      } catch {
        #expect(error.code == .absent)
      }
      do {
        _ = try store.read()
        Issue.record("observe created a record")
      } catch {
        #expect(error.code == .absent)
      }
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func signInThenObservationsAdvanceLikeTheSharedRule() throws {
      let store = try makeStore()
      let first = try store.resetAfterOnlineSignIn(now: .at(1_000))
      #expect(first.generation == 1)
      #expect(first.mark == .at(1_000))

      let forward = try store.observe(now: .at(1_500))
      #expect(forward.previous == first)
      #expect(forward.current == first.observing(ClockObservation(wall: .at(1_500))))
      #expect(forward.wrote)
      #expect(try store.read().mark == .at(1_500))

      let rollback = try store.observe(now: .at(900))
      #expect(rollback.current.mark == .at(1_500), "a rollback never lowers the mark")
      #expect(try store.read().mark == .at(1_500))

      let again = try store.resetAfterOnlineSignIn(now: .at(1_200))
      #expect(again.generation == 2)
      #expect(again.mark == .at(1_200), "only a sign-in lowers the mark")
      #expect(try store.read() == again)
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func markResolutionSkipsSmallRisesExactlyAsNeedsWriteSays() throws {
      let store = try makeStore()
      let start = try store.resetAfterOnlineSignIn(now: .at(1_000))
      let small = try store.observe(
        ClockObservation(wall: .at(1_001)), resolution: .seconds(60))
      #expect(!small.wrote)
      #expect(try store.read() == start)
      let large = try store.observe(
        ClockObservation(wall: .at(1_061)), resolution: .seconds(60))
      #expect(large.wrote)
      #expect(try store.read().mark == .at(1_061))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func exactNanosecondsSurviveTheKeyring() throws {
      let store = try makeStore()
      let instant = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_123_456_789)
      let boot = BootClockReading(
        bootID: BootID(high: 0x1234, low: 0x5678), sinceBoot: .nanoseconds(987_654_321))
      let record = try store.resetAfterOnlineSignIn(ClockObservation(wall: instant, boot: boot))
      #expect(try store.read() == record)
      #expect(record.floor.anchorSinceBoot == .nanoseconds(987_654_321))
    }

    /// An anchored sign-in with a TPM reading, then an observation: the keyring keeps trusted
    /// time (the anchor, the TPM readings), so the next decision still uses it.
    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func trustedTimeSurvivesTheKeyring() throws {
      let store = try makeStore()
      let instant = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_123_456_789)
      let boot = BootClockReading(
        bootID: BootID(high: 0x1234, low: 0x5678), sinceBoot: .nanoseconds(987_654_321))
      let tpm = TPMClockReading(
        identity: TPMIdentity(1, 2, 3, 4), clockMilliseconds: 9_000, resetCount: 3,
        restartCount: 1, isSafe: true)
      var observation = ClockObservation(wall: instant, boot: boot, tpm: tpm)
      observation.serverAnchor = try TrustedTimeAnchor(
        serverTime: instant, uncertainty: .milliseconds(100), boot: boot, tpm: tpm)
      let record = try store.resetAfterOnlineSignIn(observation)
      #expect(record.trustedTime?.isAnchored == true)
      #expect(try store.read() == record)
      var later = tpm
      later.clockMilliseconds += 60_000
      let transition = try store.observe(
        ClockObservation(
          wall: instant.saturatingAdvanced(by: .seconds(60)),
          boot: BootClockReading(bootID: boot.bootID, sinceBoot: boot.sinceBoot + .seconds(60)),
          tpm: later))
      #expect(try store.read() == transition.current)
      #expect(try store.read().trustedTime?.lastTPM == later)
      #expect(try store.read().trustedTime?.anchor == record.trustedTime?.anchor)
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func createFirstMarkCreatesOnceAndThenKeepsTheRecord() throws {
      let store = try makeStore()
      let created = try store.createFirstMark(now: .at(5_000))
      #expect(created.generation == 0)
      #expect(created.mark == .at(5_000))
      _ = try store.observe(now: .at(6_000))
      let kept = try store.createFirstMark(now: .at(1))
      #expect(kept.mark == .at(6_000))
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing),
      .enabled(
        if: SecretServiceTestSupport.has("secret-tool"),
        "needs secret-tool (Debian: libsecret-tools)"))
    func anUnreadableSecretIsLeftAloneUntilASignIn() throws {
      let secretTool = try #require(SecretServiceTestSupport.which("secret-tool"))
      let applicationID = SecretServiceTestSupport.uniqueApplicationID()
      let store = SecretServiceClockMarkStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: applicationID,
          lockDirectory: try SecretServiceTestSupport.temporaryDirectory(),
          timeout: SecretServiceTestSupport.callLimit,
          lockTimeout: SecretServiceTestSupport.lockLimit))
      let attributes = [
        "xdg:schema", "org.offlinettl.Secret", "application", applicationID, "kind", "clock-mark",
        "key", "mark",
      ]
      let stored = try SecretServiceTestSupport.run(
        "/bin/sh",
        ["-c", "printf 'not a record' | \"$0\" store --label=corrupt \"$@\""]
          + [secretTool] + attributes)
      #expect(stored.status == 0, "\(stored.standardError)")

      for attempt in [{ _ = try store.read() }, { _ = try store.observe(now: .at(10)) }] {
        do {
          try attempt()
          Issue.record("a corrupt secret was accepted")
        } catch let error as ClockMarkStoreError {
          #expect(error.code == .unreadable)
          #expect(error.unreadableReason == .malformed)
        }
      }
      let lookup = try SecretServiceTestSupport.run(secretTool, ["lookup"] + attributes)
      #expect(lookup.standardOutput == "not a record", "the bytes are left exactly as they were")

      let reset = try store.resetAfterOnlineSignIn(now: .at(20))
      #expect(reset.generation == 1)
      #expect(try store.read() == reset)
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func fourThreadsNeverLowerTheMark() throws {
      let store = try makeStore()
      _ = try store.resetAfterOnlineSignIn(now: .at(0))
      let highest = Mutex<Int64>(0)
      let violations = Mutex<[String]>([])
      runConcurrently(4) { thread in
        var lastSeen = Int64.min
        for step in 0..<15 {
          let wall = Int64((thread * 7_919 + step * 104_729) % 10_000)
          highest.withLock { $0 = max($0, wall) }
          do {
            let transition = try store.observe(now: .at(wall))
            let previous = transition.previous.mark.nanosecondsSinceEpoch
            if previous < lastSeen { violations.withLock { $0.append("\(previous)<\(lastSeen)") } }
            lastSeen = transition.current.mark.nanosecondsSinceEpoch
          } catch {
            violations.withLock { $0.append("\(error)") }
          }
        }
      }
      #expect(violations.withLock { $0 } == [])
      #expect(try store.read().mark == .at(highest.withLock { $0 }))
    }
  }
#endif
