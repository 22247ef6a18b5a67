#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import OfflineTTLTesting
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
      // The four take turns holding the lock file across D-Bus calls (flock is not fair): on a
      // loaded machine one may wait longer than the library's 30 s for it.
      let limit = String(SecretServiceTestSupport.lockLimit.components.seconds * 1000)
      let children = try (1...4).map { seed in
        try SecretServiceTestSupport.start(
          probe,
          [applicationID, locks, "stress", "40", String(seed), String(low), String(high)],
          environment: ["OFFLINE_TTL_PROBE_LOCK_TIMEOUT_MS": limit])
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

    /// The lock file itself goes through the secure open: offline, a FIFO, a directory or a
    /// symbolic link in its place is refused at once (never waited on or followed, `lock_failed`);
    /// a lock file that group or others may write, one with a second name (a hard link) or another
    /// user's is `insecure_store`; each message names the path. The online reset replaces the
    /// first four and still refuses the last two. Nothing outside the lock directory changes.
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
      neverWaitingOn(kind == "fifo" ? [lock] : [], "observe over a \(kind) lock file") {
        do throws(StoreError) {
          _ = try store.observe(now: .at(1))
          Issue.record("\(kind): used a hostile lock file")
        } catch {
          let insecure = ["mode 0666", "hard link", "owner"].contains(kind)
          #expect(error.code == (insecure ? .insecureStore : .lockFailed), "\(kind): \(error)")
          #expect(error.reason.contains(lock), "\(kind): \(error)")
        }
      }
      #expect(
        (try? String(contentsOfFile: outside, encoding: .utf8)) == "outside", "\(kind)")
      // The online reset replaces what it may (a lock file holds no data): the wrong type or a
      // second name gives a new regular file of this user, 0600, one name; another user's file
      // or one others may write is still refused. The outside file keeps its bytes.
      let replaced = ["fifo", "directory", "symbolic link", "hard link"].contains(kind)
      neverWaitingOn(kind == "fifo" ? [lock] : [], "the reset over a \(kind) lock file") {
        do throws(StoreError) {
          _ = try store.resetAfterOnlineSignIn(now: .at(2))
          #expect(replaced, "\(kind): reset over a lock file it must refuse")
        } catch {
          #expect(
            replaced
              ? error.code != .insecureStore && error.code != .lockFailed
              : error.code == .insecureStore, "\(kind): \(error)")
        }
      }
      var info = stat()
      if replaced {
        #expect(lstat(lock, &info) == 0)
        #expect(
          info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o7777 == 0o600
            && info.st_nlink == 1, "\(kind)")
      }
      #expect(
        (try? String(contentsOfFile: outside, encoding: .utf8)) == "outside", "\(kind)")
    }

    /// The lock directory and lock files the library makes are 0700 and 0600 whatever the
    /// caller's umask (777, 277, 022, 000), each store call made on a thread with a umask of its
    /// own (``ThreadUmask``); with the keyring running, the calls also work, and a later call
    /// under the usual umask does. Without it, the calls fail after the lock (nothing to reach),
    /// which is enough for the modes.
    @Test(
      .enabled(if: ThreadUmask.isSupported, "a umask of one thread needs Linux unshare(CLONE_FS)"),
      arguments: [UInt32(0o777), 0o277, 0o022, 0o000])
    func theLockDirectoryAndFilesArePrivateWhateverTheUmask(mask: UInt32) throws {
      let parent = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: parent) }
      let directory = parent + "/locks"
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: SecretServiceTestSupport.uniqueApplicationID() + ".\(mask)",
        lockDirectory: directory, timeout: .seconds(10))
      let worked = try ThreadUmask.run(umask: mask) { () -> Bool in
        let marks = SecretServiceClockMarkStore(configuration: configuration)
        let cache = SecretServiceCacheStore(configuration: configuration)
        let reset = (try? marks.resetAfterOnlineSignIn(now: .at(1))) != nil
        let locked = (try? cache.withWriterLock { true }) == true
        return reset && locked
      }
      var info = stat()
      #expect(lstat(directory, &info) == 0 && info.st_mode & 0o7777 == 0o700, "\(directory)")
      let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      #expect(names.count == 2, "\(names)")
      for name in names {
        #expect(lstat(directory + "/" + name, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600, "\(name)")
      }
      if SecretServiceTestSupport.keyringReady {
        #expect(worked)
        let marks = SecretServiceClockMarkStore(configuration: configuration)
        #expect(throws: Never.self) { _ = try marks.observe(now: .at(2)) }
      }
    }

    /// A lock file that another open file description holds past the configuration's
    /// `lockTimeout` (a holder stopped with `SIGSTOP`, as the store sees it) is `lock_timed_out`
    /// within the limit, for the mark and the items alike; no keyring is needed: the lock is
    /// taken before any call to the service.
    @Test func aLockFileHeldPastTheLimitIsLockTimedOut() throws {
      let directory = try SecretServiceTestSupport.temporaryDirectory() + "/locks"
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: "org.offlinettl.tests.held", lockDirectory: directory,
        lockTimeout: .milliseconds(300))
      let marks = SecretServiceClockMarkStore(configuration: configuration)
      let cache = SecretServiceCacheStore(configuration: configuration)
      // Creates the directory and the lock files (the service itself may be missing).
      _ = try? marks.resetAfterOnlineSignIn(now: .at(1))
      _ = try? cache.withWriterLock { true }
      let clock = ContinuousClock()
      for kind in ["marks", "items"] {
        // `<lock directory>/secret-service.<application id>.<kind>.lock`.
        let path = directory + "/secret-service.org.offlinettl.tests.held.\(kind).lock"
        let held = open(path, O_RDONLY | O_CLOEXEC)
        try #require(held >= 0, "\(path)")
        defer { close(held) }
        try #require(flock(held, LOCK_EX | LOCK_NB) == 0)
        let start = clock.now
        let error = #expect(throws: StoreError.self) {
          if kind == "items" {
            _ = try cache.withWriterLock { true }
          } else {
            _ = try marks.observe(now: .at(2))
          }
        }
        let elapsed = clock.now - start
        #expect(error?.code == .lockTimedOut, "\(kind): \(String(describing: error))")
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3), "\(kind): \(elapsed)")
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
