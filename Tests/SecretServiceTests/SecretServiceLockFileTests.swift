#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  /// The lock file: four processes observing through the store with random clocks never lower
  /// the mark; the lock directory is refused when it is unsafe.
  @Suite struct SecretServiceLockFileTests {
    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func fourProcessesWithRandomClocksNeverLowerTheMark() throws {
      let probe = SecretServiceTestSupport.product("offline-ttl-secret-probe")
      let applicationID = SecretServiceTestSupport.uniqueApplicationID()
      let locks = try SecretServiceTestSupport.temporaryDirectory() + "/locks"
      let reset = try SecretServiceTestSupport.run(probe, [applicationID, locks, "reset", "0"])
      #expect(reset.status == 0, "\(reset.standardOutput)")

      let low: Int64 = 1_000_000_000_000_000_000
      let high = low + 86_400_000_000_000
      let children = try (1...4).map { seed in
        try SecretServiceTestSupport.start(
          probe,
          [applicationID, locks, "stress", "40", String(seed), String(low), String(high)])
      }
      let outputs = try children.map { try $0.wait() }
      for output in outputs {
        #expect(output.status == 0, "\(output.standardOutput)")
      }
      let highest = outputs.compactMap { $0.value("highest_wall").flatMap { Int64($0) } }.max()
      let final = try SecretServiceTestSupport.run(probe, [applicationID, locks, "read"])
      #expect(final.value("mark").flatMap { Int64($0) } == highest, "the mark is the highest wall")
      #expect(final.value("generation") == "1")
    }

    @Test func aGroupReadableLockDirectoryIsRefused() throws {
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      try FileManager.default.setAttributes(
        [.posixPermissions: 0o755], ofItemAtPath: directory)
      let store = SecretServiceClockMarkStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: "org.offlinettl.tests.mode", lockDirectory: directory))
      do {
        _ = try store.observe(now: .at(1))
        Issue.record("observed with an unsafe lock directory")
      } catch {
        #expect(error.code == .lockFailed)
      }
    }

    @Test func aSymbolicLinkLockDirectoryIsNotFollowed() throws {
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      try FileManager.default.createSymbolicLink(
        atPath: directory + "/link", withDestinationPath: directory)
      let store = SecretServiceClockMarkStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: "org.offlinettl.tests.link", lockDirectory: directory + "/link"))
      do {
        _ = try store.resetAfterOnlineSignIn(now: .at(1))
        Issue.record("used a lock directory behind a symbolic link")
      } catch {
        #expect(error.code == .lockFailed)
        #expect(error.reason.contains("symbolic link"))
      }
    }
  }
#endif
