#if SecretService
  import CLibSecret
  import OfflineTTL

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The `flock`ed file that serializes read → advance → write across threads and processes
  /// (the Rules article, "Clock mark"): the Secret Service has no transactions.
  ///
  /// Each acquisition opens its own file description, so two threads of one process exclude each
  /// other too (POSIX `fcntl` locks would not). The directory is created 0700 when missing and
  /// refused when it is a symbolic link, not a directory, not ours, or open to others; the file is
  /// opened with `O_NOFOLLOW`, mode 0600.
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
    ///   - failure: Turns a lock ``Failure`` into the caller's error.
    ///   - body: The work to serialize.
    /// - Throws: `failure(…)` when the directory or file is unusable or the wait runs out; or what
    ///   `body` throws.
    static func withLock<Result, Failed: Error>(
      path: String, timeout: Duration, failure: (Failure) -> Failed,
      _ body: () throws(Failed) -> Result
    ) throws(Failed) -> Result {
      let fd: Int32
      do { fd = try acquire(path: path, timeout: timeout) } catch { throw failure(error) }
      defer { close(fd) }  // releases the flock
      return try body()
    }

    private static func acquire(path: String, timeout: Duration) throws(Failure) -> Int32 {
      let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
      try Self.prepareDirectory(directory.isEmpty ? "." : directory)
      var fd: Int32
      repeat {
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
      } while fd < 0 && errno == EINTR
      guard fd >= 0 else {
        throw Failure(errno: errno, message: "cannot open the lock file \(path) (errno \(errno))")
      }
      let limit = timeout.exactNanoseconds ?? .max
      var waited: Int64 = 0
      var pause: Int64 = 200_000  // 0.2 ms, doubling to 5 ms
      while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        let code = errno
        if code == EINTR { continue }
        guard code == EWOULDBLOCK, waited < limit else {
          close(fd)
          throw Failure(
            errno: code,
            message: code == EWOULDBLOCK
              ? "the lock file \(path) stayed locked past the time limit"
              : "cannot lock \(path) (errno \(code))")
        }
        var request = timespec(tv_sec: 0, tv_nsec: Int(pause))
        nanosleep(&request, nil)
        waited += pause
        pause = min(pause * 2, 5_000_000)
      }
      return fd
    }

    private static func prepareDirectory(_ directory: String) throws(Failure) {
      if mkdir(directory, 0o700) != 0 && errno != EEXIST {
        throw Failure(
          errno: errno, message: "cannot create the lock directory \(directory) (errno \(errno))")
      }
      var status = stat()
      guard lstat(directory, &status) == 0 else {
        throw Failure(errno: errno, message: "cannot inspect \(directory) (errno \(errno))")
      }
      let kind = status.st_mode & S_IFMT
      guard kind == S_IFDIR else {
        throw Failure(
          errno: nil,
          message: kind == S_IFLNK
            ? "the lock directory \(directory) is a symbolic link; it is not followed"
            : "the lock directory \(directory) is not a directory")
      }
      guard status.st_uid == geteuid(), status.st_mode & 0o077 == 0 else {
        throw Failure(
          errno: nil,
          message: "the lock directory \(directory) must be owned by this user with mode 0700")
      }
    }
  }
#endif
