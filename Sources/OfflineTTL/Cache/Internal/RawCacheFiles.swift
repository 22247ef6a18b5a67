import Foundation

/// The sealed store's read-only file operations on raw descriptors (errors as ``Errno``), composed
/// from the syscall seam (``Syscalls``: every libc call goes through it, `EINTR` retried,
/// `O_NOFOLLOW | O_CLOEXEC` on every open, faults injectable per store instance). The sealed
/// readers open their files with `O_NONBLOCK` and check their type themselves, and every sealed
/// file is authenticated, so a file another user could write cannot be forged; the store
/// directory and `cache/` are opened by the secure open (``CacheFiles``) before any of this runs.
/// Nothing here writes: the sealed sign-in and commit write through ``CacheFiles`` (the secure
/// open, `O_EXCL` for every new file, wrong types replaced), as the unsealed ones do.
struct RawCacheFiles: Sendable {
  let sys: Syscalls

  /// Opens a directory by path or relative to `parent`, never following a symbolic link as its
  /// last component.
  func openDirectory(_ parent: FileDescriptor?, _ name: String) throws(Errno) -> FileDescriptor {
    if let parent { return try sys.openat(parent, name, .directory) }
    return try sys.open(name, .directory)
  }

  /// Opens a file for reading without waiting: `O_NONBLOCK` is always added (a FIFO opens at
  /// once and reads as empty); the caller checks its type on the descriptor.
  func openFile(_ parent: FileDescriptor, _ name: String, _ flags: OpenFlags) throws(Errno)
    -> FileDescriptor
  {
    try sys.openat(parent, name, flags.union(.nonBlocking), mode: 0o600)
  }

  func close(_ fd: FileDescriptor) {
    sys.closeIgnoringErrors(fd)
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

  func names(in fd: FileDescriptor) throws(Errno) -> [String] {
    try sys.directoryEntries(fd)
  }
}
