import Foundation

/// The sealed store's file operations on raw descriptors (errors as ``Errno``), composed from the
/// syscall seam (``Syscalls``: every libc call goes through it, `EINTR` retried,
/// `O_NOFOLLOW | O_CLOEXEC` on every open, faults injectable per store instance). The sealed
/// store opens its files with `O_NONBLOCK` and checks their type itself, and every sealed file
/// is authenticated, so a file another user could write cannot be forged; the store directory
/// and `cache/` are opened by the secure open (``CacheFiles``) before any of this runs.
struct RawCacheFiles: Sendable {
  let sys: Syscalls

  /// Opens a directory by path or relative to `parent`, never following a symbolic link as its
  /// last component.
  func openDirectory(_ parent: FileDescriptor?, _ name: String) throws(Errno) -> FileDescriptor {
    if let parent { return try sys.openat(parent, name, .directory) }
    return try sys.open(name, .directory)
  }

  /// Opens a directory, creating it (mode 0700) first when it is missing.
  func openOrCreateDirectory(_ parent: FileDescriptor?, _ name: String) throws(Errno)
    -> FileDescriptor
  {
    do {
      return try openDirectory(parent, name)
    } catch  where error == .noSuchFileOrDirectory {
      do {
        if let parent {
          try sys.mkdirat(parent, name, mode: 0o700)
        } else {
          try sys.mkdir(name, mode: 0o700)
        }
      } catch  where error == .fileExists {}
      let fd = try openDirectory(parent, name)
      do { try sys.fchmod(fd, mode: 0o700) } catch {
        sys.closeIgnoringErrors(fd)
        throw error
      }
      return fd
    }
  }

  func openFile(_ parent: FileDescriptor, _ name: String, _ flags: OpenFlags) throws(Errno)
    -> FileDescriptor
  {
    try sys.openat(parent, name, flags, mode: 0o600)
  }

  /// Creates (or truncates) a private file for writing: mode 0600 at creation (the umask can
  /// only remove bits from it). Files are created only inside the store's own 0700 `tmp/`, so
  /// no other mode is ever found there.
  func createFile(_ parent: FileDescriptor, _ name: String) throws(Errno) -> FileDescriptor {
    try openFile(parent, name, [.writeOnly, .create, .truncate])
  }

  func close(_ fd: FileDescriptor) {
    sys.closeIgnoringErrors(fd)
  }

  func writeAll(_ fd: FileDescriptor, _ bytes: [UInt8]) throws(Errno) {
    try sys.writeAll(fd, bytes: bytes[...])
  }

  func writeAll(_ fd: FileDescriptor, _ bytes: Data) throws(Errno) {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(Errno) in try sys.writeAll(fd, raw) }
    }
    try result.get()
  }

  /// The most ``read(_:count:offset:)`` reads in one call: the largest sealed file there can be
  /// (an item of the 1 GiB maximum payload with its header and tag) with room to spare.
  static let maximumReadCount = Int(CacheFormat.maximumPayloadLength) + 4096

  /// Reads up to `count` bytes from `offset`; fewer only at end of file.
  ///
  /// - Throws: `EFBIG` (``Errno/fileTooLarge``) before anything is allocated when `count` is
  ///   negative or above ``maximumReadCount`` (a size taken from `fstat` of a sparse 1 TiB file,
  ///   say); else the read's errno.
  func read(_ fd: FileDescriptor, count: Int, offset: Int64) throws(Errno) -> [UInt8] {
    guard count >= 0, count <= Self.maximumReadCount else { throw .fileTooLarge }
    var buffer = [UInt8](repeating: 0, count: count)
    let filled = try sys.preadAll(fd, into: &buffer, at: offset)
    buffer.removeLast(count - filled)
    return buffer
  }

  func status(_ fd: FileDescriptor) throws(Errno) -> FileStatus {
    try sys.fstat(fd)
  }

  func status(_ parent: FileDescriptor, _ name: String) throws(Errno) -> FileStatus {
    try sys.fstatat(parent, name)
  }

  func exists(_ parent: FileDescriptor, _ name: String) throws(Errno) -> Bool {
    do {
      _ = try status(parent, name)
      return true
    } catch  where error == .noSuchFileOrDirectory {
      return false
    }
  }

  func sync(_ fd: FileDescriptor) throws(Errno) {
    try sys.fsync(fd)
  }

  /// One flush of the whole file system (`syncfs(2)`).
  func syncFileSystem(_ fd: FileDescriptor) throws(Errno) {
    try sys.syncfs(fd)
  }

  func rename(
    _ fromParent: FileDescriptor, _ from: String, _ toParent: FileDescriptor, _ to: String
  ) throws(Errno) {
    try sys.renameat(fromParent, from, into: toParent, as: to)
  }

  /// Removes a file; a missing one is not an error.
  func unlink(_ parent: FileDescriptor, _ name: String) throws(Errno) {
    do {
      try sys.unlinkat(parent, name)
    } catch  where error == .noSuchFileOrDirectory {}
  }

  func lockExclusive(_ fd: FileDescriptor) throws(Errno) {
    try sys.flock(fd, .exclusive)
  }

  func names(in fd: FileDescriptor) throws(Errno) -> [String] {
    try sys.directoryEntries(fd)
  }
}
