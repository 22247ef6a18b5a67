import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// ``BinaryRunner/copy(to:whileWriting:)``: a copy of an executable runs at once even when a
/// child started while the copy was being written lives on. A copy made with Foundation's
/// `copyItem` (no `O_CLOEXEC`) once failed `LibraryUmaskEndToEndTests` in CI with `ETXTBSY`:
/// another test's child kept the copy open for writing.
@Suite struct ExecutableCopyTests {
  /// Starts `path` with `posix_spawn` and no file actions, so the child keeps every descriptor
  /// of this process that is not close-on-exec.
  ///
  /// - Returns: The child's pid, or the `errno` `posix_spawn` returned (glibc reports a failed
  ///   `execve` there).
  static func spawn(_ path: String, _ arguments: [String]) -> Result<pid_t, Errno> {
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, path, nil, nil, argv, environ)
    return status == 0 ? .success(pid) : .failure(Errno(value: status))
  }

  struct Errno: Error, Equatable { let value: Int32 }

  /// Waits for `pid` and returns its exit status, or `nil` when a signal ended it.
  static func exitStatus(of pid: pid_t) -> Int32? {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
  }

  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sleep")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/true"),
      "needs /usr/bin/sleep and /usr/bin/true (coreutils)"))
  func aCopyRunsWhileAChildStartedDuringItsWritingStillLives() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-copy")
    defer { scratch.remove() }
    var sleepers: [pid_t] = []
    defer {
      for pid in sleepers {
        kill(pid, SIGKILL)
        _ = Self.exitStatus(of: pid)
      }
    }
    func startSleeper() throws {
      sleepers.append(try Self.spawn("/usr/bin/sleep", ["60"]).get())
    }

    // What this guards against: a copy written through a descriptor without close-on-exec,
    // open while a child starts, stays open in that child and cannot be run (ETXTBSY).
    let leaked = scratch.appending("leaked-true")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/bin/true"))
    let fd = open(leaked, O_WRONLY | O_CREAT | O_EXCL, 0o755)
    try #require(fd >= 0)
    #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    try startSleeper()
    close(fd)
    let refused = Self.spawn(leaked, [])
    if case .success(let pid) = refused { _ = Self.exitStatus(of: pid) }
    #expect(refused.map { _ in 0 } == .failure(Errno(value: ETXTBSY)))

    // The helper's copy, with the same child started while its descriptor is open.
    let copy = try BinaryRunner(path: "/usr/bin/true").copy(
      to: scratch.appending("copied-true"),
      whileWriting: { descriptor in
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        try startSleeper()
      })
    // A child another test starts holds the close-on-exec descriptor from its clone(2) to its
    // execve(2), microseconds: a spawn in that window gets ETXTBSY and is tried again.
    var started = Self.spawn(copy.executable.path, [])
    for _ in 0..<50 where started == .failure(Errno(value: ETXTBSY)) {
      usleep(10_000)
      started = Self.spawn(copy.executable.path, [])
    }
    #expect(try Self.exitStatus(of: started.get()) == 0, "\(started)")
    var info = stat()
    #expect(stat(copy.executable.path, &info) == 0 && info.st_mode & 0o7777 == 0o755)
    #expect(info.st_size == off_t(bytes.count))
  }
}
