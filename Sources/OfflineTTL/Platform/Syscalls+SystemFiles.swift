/// Why a small file of the system (not of a store) could not be read: the boot id, the machine
/// id, anything under `/proc` or `/etc` that the package reads.
struct SystemFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong.
  enum Reason: Sendable, Hashable {
    /// A call failed (`ENOENT`, `EMFILE`, `EACCES`, `EIO`, `ELOOP` for a symbolic link, ...).
    case failed(Errno)
    /// Something other than a regular file stands there (a FIFO, a socket, a directory, a
    /// device): never waited on, never read.
    case notARegularFile(FileStatus.Kind)
    /// The file holds more than the reader's limit.
    case tooLarge(limit: Int)
  }

  /// The file's path.
  let path: String
  /// What went wrong.
  let reason: Reason

  /// The error number of a failed call, or `nil`.
  var errno: Errno? {
    if case .failed(let errno) = reason { return errno }
    return nil
  }

  /// E.g. `"/etc/machine-id: EMFILE (Too many open files)"` or `"...: a FIFO, not a regular
  /// file"`.
  var description: String {
    switch reason {
    case .failed(let errno): "\(path): \(errno)"
    case .notARegularFile(let kind): "\(path): \(kind), not a regular file"
    case .tooLarge(let limit): "\(path): more than \(limit) bytes"
    }
  }
}

extension Syscalls {
  /// Opens a file of the system that no store owns (`/proc/self/mountinfo`, ...) so that it
  /// can never block: `O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC`, then refused (closed)
  /// unless `fstat` says it is a regular file. A FIFO, socket or device put in its place (for
  /// example by a bind mount in a private mount namespace) is never waited on.
  ///
  /// - Parameter path: The file; a symbolic link as its last component is refused (`ELOOP`).
  /// - Returns: The open descriptor (the caller closes it).
  /// - Throws: ``SystemFileError``.
  func openSystemFile(_ path: String) throws(SystemFileError) -> FileDescriptor {
    let fd: FileDescriptor
    do throws(Errno) {
      fd = try open(path, [.readOnly, .nonBlocking])
    } catch {
      throw SystemFileError(path: path, reason: .failed(error))
    }
    let info: FileStatus
    do throws(Errno) {
      info = try fstat(fd)
    } catch {
      closeIgnoringErrors(fd)
      throw SystemFileError(path: path, reason: .failed(error))
    }
    guard info.kind == .regular else {
      closeIgnoringErrors(fd)
      throw SystemFileError(path: path, reason: .notARegularFile(info.kind))
    }
    return fd
  }

  /// Reads a small file of the system that no store owns (the kernel's boot id, the machine id,
  /// a `/proc` file) so that it can never block: opened `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC`
  /// (a FIFO or a device put in its place, for example by a bind mount in a private mount
  /// namespace, is never waited on), then refused unless `fstat` says it is a regular file.
  /// `/proc` files report a size of 0, so the size is not trusted: at most `limit + 1` bytes
  /// are read.
  ///
  /// - Parameters:
  ///   - path: The file; a symbolic link as its last component is refused (`ELOOP`).
  ///   - limit: The most bytes accepted.
  /// - Returns: The file's bytes (at most `limit`).
  /// - Throws: ``SystemFileError``.
  /// - Complexity: One `open`, `fstat`, `close`, and `pread`s of at most `limit + 1` bytes.
  func readSystemFile(_ path: String, limit: Int) throws(SystemFileError) -> [UInt8] {
    let fd = try openSystemFile(path)
    defer { closeIgnoringErrors(fd) }
    var buffer = [UInt8](repeating: 0, count: limit + 1)
    let filled: Int
    do throws(Errno) {
      filled = try preadAll(fd, into: &buffer, at: 0)
    } catch {
      throw SystemFileError(path: path, reason: .failed(error))
    }
    guard filled <= limit else {
      throw SystemFileError(path: path, reason: .tooLarge(limit: limit))
    }
    return Array(buffer[0..<filled])
  }
}
