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
  /// other too (POSIX `fcntl` locks would not). Both the directory and the file go through the
  /// stores' secure open (`SecureStoreFiles`: non-blocking, never following a link, checked with
  /// `fstat` on the descriptor): the directory is created 0700 when missing and refused when its
  /// last name is a symbolic link, it is not a directory, not ours, or open to group or others;
  /// the file (created 0600) is refused when it is not a regular file (a FIFO never makes it
  /// wait), not ours, writable by group or others, or has a second name (a hard link); the
  /// online operations (the mark's reset, a cache commit or writer lock) replace a file of the
  /// wrong type, one with a second name or one of this user that it may not open with a new one
  /// (`SecureStoreFiles.openOrReplaceFile`), as the file stores do. Every
  /// file-system and lock call goes through the syscall seam (`Syscalls`); only the sleep
  /// between two tries stays outside it.
  enum SecretServiceLockFile {
    /// Why the lock could not be taken.
    struct Failure: Error {
      /// The operating system's error number, when one caused this.
      var errno: Int32?
      /// A sentence for people.
      var message: String
      /// Whether the directory or file is another user's, open to others, or has a second name:
      /// the store reports `insecure_store` then, else `lock_failed`.
      var insecure = false
      /// Whether another holder kept the lock past the time limit: `lock_timed_out`.
      var timedOut = false
    }

    /// The store error for a lock failure: `insecure_store`, `lock_timed_out` or `lock_failed`.
    static func storeError(_ failure: Failure) -> StoreError {
      StoreError(
        code: failure.insecure ? .insecureStore : failure.timedOut ? .lockTimedOut : .lockFailed,
        errno: failure.timedOut ? nil : failure.errno, message: failure.message)
    }

    /// Runs `body` holding the lock, taken within at most `timeout`.
    ///
    /// Polls with `LOCK_NB` and short sleeps rather than blocking in `flock`, so the wait is
    /// bounded even under libfaketime; the elapsed time is counted from the sleeps themselves.
    ///
    /// - Parameters:
    ///   - path: The lock file; its directory is created 0700 if missing.
    ///   - timeout: How long to wait for another holder.
    ///   - repairing: Whether this is an online operation, which replaces a lock file of the
    ///     wrong type, with a second name, or that this user may not open (it holds no data)
    ///     instead of refusing it. Another user's lock file, or one others may write, is still
    ///     refused.
    ///   - failure: Turns a lock `Failure` into the caller's error.
    ///   - body: The work to serialize.
    /// - Throws: `failure(…)` when the directory or file is unusable or the wait runs out; or what
    ///   `body` throws.
    static func withLock<Result, Failed: Error>(
      path: String, timeout: Duration, repairing: Bool = false, failure: (Failure) -> Failed,
      _ body: () throws(Failed) -> Result
    ) throws(Failed) -> Result {
      let system = Syscalls()
      let fd: FileDescriptor
      do {
        fd = try acquire(path: path, timeout: timeout, repairing: repairing, system)
      } catch {
        throw failure(error)
      }
      defer { system.closeIgnoringErrors(fd) }  // releases the flock
      return try body()
    }

    private static func acquire(
      path: String, timeout: Duration, repairing: Bool, _ system: Syscalls
    ) throws(Failure) -> FileDescriptor {
      let secure = SecureStoreFiles(system: system)
      let slash = path.lastIndex(of: "/")
      let directoryPath = slash.map { String(path[..<$0]) } ?? "."
      let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
      let directory = try Self.openDirectory(directoryPath.isEmpty ? "/" : directoryPath, secure)
      defer { secure.close(directory) }
      let fd: FileDescriptor
      do {
        fd =
          repairing
          ? try secure.openOrReplaceFile(name, in: directory, [.readWrite, .create]).fd
          : try secure.openFile(name, in: directory, [.readWrite, .create]).fd
      } catch {
        throw Failure(
          errno: error.errno?.rawValue,
          message: "cannot use the lock file: \(error)"
            + (error.isInsecure || error.isWrongType
              ? "; it must be this user's regular file, mode 0600, with one name: remove it (it"
                + " holds no data) and try again, or sign in online (which replaces one of this"
                + " user)" : ""),
          insecure: error.isInsecure)
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
                ? "the lock file \(path) stayed locked by another thread or process past the"
                  + " lock timeout (\(timeout)); nothing was read or written"
                : "cannot lock \(path): \(error)",
              timedOut: error == .wouldBlock)
          }
        }
        // Sleeping is not a file-system call: it stays outside the syscall seam.
        var request = timespec(tv_sec: 0, tv_nsec: Int(pause))
        nanosleep(&request, nil)
        waited += pause
        pause = min(pause * 2, 5_000_000)
      }
    }

    /// Opens (creating, 0700) the lock directory with the secure open, and refuses one that
    /// group or others may even read or enter.
    private static func openDirectory(_ path: String, _ secure: SecureStoreFiles)
      throws(Failure) -> StoreDirectory
    {
      let directory: StoreDirectory
      do {
        directory = try secure.openDirectory(atPath: path, creating: true)
      } catch {
        throw Failure(
          errno: error.errno?.rawValue,
          message: error.problem == .symbolicLink
            ? "the lock directory \(path) is a symbolic link; it is not followed"
            : "cannot use the lock directory: \(error)"
              + (error.isInsecure ? "; it must be owned by this user with mode 0700" : ""),
          insecure: error.isInsecure)
      }
      let status: FileStatus
      do {
        status = try secure.system.fstat(directory.fd)
      } catch {
        secure.close(directory)
        throw Failure(errno: error.rawValue, message: "cannot inspect \(path): \(error)")
      }
      guard !status.isAccessibleByOthers else {
        secure.close(directory)
        throw Failure(
          errno: nil,
          message: "the lock directory \(path) has mode 0\(String(status.permissions, radix: 8)):"
            + " it must be owned by this user with mode 0700",
          insecure: true)
      }
      return directory
    }
  }
#endif
