#if SecretService
  import CLibSecret
  @_spi(SystemCalls) import OfflineTTL

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The `flock`ed file that serializes read → advance → write across threads and processes
  /// (the Rules article, "Clock mark"): the Secret Service has no transactions.
  ///
  /// Each acquisition opens its own file description, so two threads of one process exclude each
  /// other too (POSIX `fcntl` locks would not). The directory is created 0700 when missing and
  /// refused when it is a symbolic link, not a directory, not ours, or open to others; the file is
  /// opened with `O_NOFOLLOW`, mode 0600. Every file-system and lock call goes through the
  /// syscall seam (`Syscalls`); only the sleep between two tries stays outside it.
  enum SecretServiceLockFile {
    /// Why the lock could not be taken.
    struct Failure: Error {
      /// The operating system's error number, when one caused this.
      var errno: Int32?
      /// A sentence for people.
      var message: String
    }

    /// Runs `body` holding the lock, taken within at most `timeout`.
    ///
    /// Polls with `LOCK_NB` and short sleeps rather than blocking in `flock`, so the wait is
    /// bounded even under libfaketime; the elapsed time is counted from the sleeps themselves.
    ///
    /// - Parameters:
    ///   - path: The lock file; its directory is created 0700 if missing.
    ///   - timeout: How long to wait for another holder.
    ///   - failure: Turns a lock `Failure` into the caller's error.
    ///   - body: The work to serialize.
    /// - Throws: `failure(…)` when the directory or file is unusable or the wait runs out; or what
    ///   `body` throws.
    static func withLock<Result, Failed: Error>(
      path: String, timeout: Duration, failure: (Failure) -> Failed,
      _ body: () throws(Failed) -> Result
    ) throws(Failed) -> Result {
      let system = Syscalls()
      let fd: FileDescriptor
      do { fd = try acquire(path: path, timeout: timeout, system) } catch { throw failure(error) }
      defer { system.closeIgnoringErrors(fd) }  // releases the flock
      return try body()
    }

    private static func acquire(path: String, timeout: Duration, _ system: Syscalls)
      throws(Failure) -> FileDescriptor
    {
      let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
      try Self.prepareDirectory(directory.isEmpty ? "." : directory, system)
      let fd: FileDescriptor
      do {
        fd = try system.open(path, [.readWrite, .create, .nonBlocking], mode: 0o600)
      } catch {
        throw Failure(errno: error.rawValue, message: "cannot open the lock file \(path): \(error)")
      }
      let limit = timeout.exactNanoseconds ?? .max
      var waited: Int64 = 0
      var pause: Int64 = 200_000  // 0.2 ms, doubling to 5 ms
      while true {
        do {
          try system.flock(fd, LockOperation.exclusive.nonBlocking)
          return fd
        } catch {
          guard error == .wouldBlock, waited < limit else {
            system.closeIgnoringErrors(fd)
            throw Failure(
              errno: error.rawValue,
              message: error == .wouldBlock
                ? "the lock file \(path) stayed locked past the time limit"
                : "cannot lock \(path): \(error)")
          }
        }
        // Sleeping is not a file-system call: it stays outside the syscall seam.
        var request = timespec(tv_sec: 0, tv_nsec: Int(pause))
        nanosleep(&request, nil)
        waited += pause
        pause = min(pause * 2, 5_000_000)
      }
    }

    private static func prepareDirectory(_ directory: String, _ system: Syscalls) throws(Failure) {
      do {
        try system.mkdir(directory, mode: 0o700)
      } catch  where error == .fileExists {
        // Already there: checked below.
      } catch {
        throw Failure(
          errno: error.rawValue,
          message: "cannot create the lock directory \(directory): \(error)")
      }
      let status: FileStatus
      do {
        status = try system.lstat(directory)
      } catch {
        throw Failure(errno: error.rawValue, message: "cannot inspect \(directory): \(error)")
      }
      guard status.kind == .directory else {
        throw Failure(
          errno: nil,
          message: status.kind == .symbolicLink
            ? "the lock directory \(directory) is a symbolic link; it is not followed"
            : "the lock directory \(directory) is not a directory")
      }
      guard status.ownerID == system.effectiveUserID(), !status.isAccessibleByOthers else {
        throw Failure(
          errno: nil,
          message: "the lock directory \(directory) must be owned by this user with mode 0700")
      }
    }
  }
#endif
