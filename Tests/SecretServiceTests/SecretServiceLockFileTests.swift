#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  #if canImport(Glibc)
    import Glibc
  #endif

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
        #expect(error.code == .insecureStore, "\(error)")
        #expect(error.reason.contains("mode 0700"), "\(error)")
      }
    }

    /// The lock file itself goes through the secure open: a FIFO, a directory or a symbolic link
    /// in its place is refused at once (never waited on or followed, `lock_failed`); a lock file
    /// that group or others may write, one with a second name (a hard link) or another user's is
    /// `insecure_store`; each message names the path. Nothing outside the lock directory changes.
    @Test(arguments: ["fifo", "directory", "symbolic link", "mode 0666", "hard link", "owner"])
    func aHostileLockFileIsRefusedWithoutWaiting(_ kind: String) throws {
      if kind == "owner" && geteuid() != 0 { return }
      let directory = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: "org.offlinettl.tests.lockfile", lockDirectory: directory)
      let lock = directory + "/secret-service.org.offlinettl.tests.lockfile.marks.lock"
      let outside = directory + "-outside"
      try Data("outside".utf8).write(to: URL(fileURLWithPath: outside))
      defer { try? FileManager.default.removeItem(atPath: outside) }
      switch kind {
      case "fifo": #expect(mkfifo(lock, 0o600) == 0)
      case "directory": #expect(mkdir(lock, 0o700) == 0)
      case "symbolic link": #expect(symlink(outside, lock) == 0)
      case "hard link": #expect(link(outside, lock) == 0 && chmod(lock, 0o600) == 0)
      default:
        try Data().write(to: URL(fileURLWithPath: lock))
        #expect(chmod(lock, kind == "owner" ? 0o600 : 0o666) == 0)
        if kind == "owner" { #expect(chown(lock, 65534, 65534) == 0) }
      }
      let store = SecretServiceClockMarkStore(configuration: configuration)
      do {
        _ = try store.resetAfterOnlineSignIn(now: .at(1))
        Issue.record("\(kind): used a hostile lock file")
      } catch {
        let insecure = ["mode 0666", "hard link", "owner"].contains(kind)
        #expect(error.code == (insecure ? .insecureStore : .lockFailed), "\(kind): \(error)")
        #expect(error.reason.contains(lock), "\(kind): \(error)")
      }
      #expect(
        (try? String(contentsOfFile: outside, encoding: .utf8)) == "outside", "\(kind)")
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
