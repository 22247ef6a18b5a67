import Foundation

/// The directory cache store's file operations, composed from the secure open
/// (``SecureStoreFiles``: non-blocking, never following a link, type, owner and mode checked on
/// the descriptor) over the syscall seam (``Syscalls``: every libc call, `EINTR` retried, faults
/// injectable per store instance). Nothing here calls libc itself. Every failure is a
/// ``StoreFileError`` naming the path.
struct CacheFiles: Sendable {
  let secure: SecureStoreFiles

  init(sys: Syscalls) {
    self.secure = SecureStoreFiles(system: sys)
  }

  var sys: Syscalls { secure.system }

  private func run<T>(_ path: String, _ body: () throws(Errno) -> T) throws(StoreFileError) -> T {
    do {
      return try body()
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
  }

  /// Opens the store directory (see
  /// ``SecureStoreFiles/openDirectory(atPath:creating:repairing:)``; `repairing` is for the
  /// online path only).
  func openStore(_ path: String, creating: Bool, repairing: Bool = false)
    throws(StoreFileError) -> StoreDirectory
  {
    try secure.openDirectory(atPath: path, creating: creating, repairing: repairing)
  }

  /// Opens (or creates, mode 0700 whatever the umask) a directory of the store inside `parent`;
  /// `repairing` (online path only) gives the owner's bits back to a directory of this user.
  func openDirectory(
    _ parent: StoreDirectory, _ name: String, creating: Bool = false, repairing: Bool = false
  ) throws(StoreFileError) -> StoreDirectory {
    try secure.openDirectory(name, in: parent, creating: creating, repairing: repairing)
  }

  /// Opens a directory of the store for the online path: whatever stands under its name that is
  /// not a directory of ours (a file, a FIFO, a link) is removed and the directory created, and
  /// a directory of this user gets its owner's bits back (mode 0000 or 0500 left by a umask).
  func openOrReplaceDirectory(_ parent: StoreDirectory, _ name: String) throws(StoreFileError)
    -> StoreDirectory
  {
    do {
      return try openDirectory(parent, name, creating: true, repairing: true)
    } catch  where error.isWrongType {
      try remove(parent, name)
      return try openDirectory(parent, name, creating: true, repairing: true)
    }
  }

  /// Opens a regular file of the store (checked on its descriptor).
  func openFile(_ parent: StoreDirectory, _ name: String, _ flags: OpenFlags)
    throws(StoreFileError) -> OpenedStoreFile
  {
    try secure.openFile(name, in: parent, flags)
  }

  /// Creates a new private file with `O_EXCL` (mode 0600), after removing whatever stood under
  /// its name. Only for temporary files and the `pending` marker.
  func createFile(_ parent: StoreDirectory, _ name: String) throws(StoreFileError)
    -> FileDescriptor
  {
    try secure.createExclusive(name, in: parent)
  }

  /// Replaces the file `name` in `parent` durably with `bytes` (the index's write, sealed or
  /// not): a new temporary file under the same name in `tmp` (`O_CREAT | O_EXCL`, mode 0600,
  /// after removing whatever stood there), written and `fsync`ed, renamed over `name` (after
  /// removing anything but a regular file standing there: a rename cannot replace a
  /// directory), then `fsync` of `parent`. A crash at any point leaves the old file or the new
  /// one under `name`, never part of one. Online path only.
  ///
  /// - Throws: ``StoreFileError`` naming the path of the step that failed.
  /// - Complexity: O(bytes); two `fsync`s.
  func replaceDurably(
    _ name: String, in parent: StoreDirectory, with bytes: [UInt8], through tmp: StoreDirectory
  ) throws(StoreFileError) {
    let fd = try createFile(tmp, name)
    do {
      try writeAll(fd, bytes, path: tmp.path(of: name))
      try sync(fd, path: tmp.path(of: name))
    } catch {
      close(fd)
      throw error
    }
    close(fd)
    if let existing = try? status(parent, name), existing.kind != .regular {
      try remove(parent, name)
    }
    try rename(tmp, name, parent, name)
    try sync(parent.fd, path: parent.path)
  }

  func close(_ fd: FileDescriptor) {
    sys.closeIgnoringErrors(fd)
  }

  func close(_ directory: StoreDirectory) {
    secure.close(directory)
  }

  func writeAll(_ fd: FileDescriptor, _ bytes: [UInt8], path: String) throws(StoreFileError) {
    try run(path) { () throws(Errno) in try sys.writeAll(fd, bytes: bytes[...]) }
  }

  /// Reads up to `count` bytes from `offset`; fewer only at end of file. The caller has checked
  /// `count` against the file's size and the format's maximum.
  func read(_ fd: FileDescriptor, count: Int, offset: Int64, path: String)
    throws(StoreFileError) -> [UInt8]
  {
    var buffer = [UInt8](repeating: 0, count: count)
    let filled = try run(path) { () throws(Errno) in
      try sys.preadAll(fd, into: &buffer, at: offset)
    }
    buffer.removeLast(count - filled)
    return buffer
  }

  /// Reads exactly `count` bytes from `offset` into new memory and hands them to `accept`, which
  /// checks them (and may change them in place: a sealed item decrypts there). When it accepts,
  /// that memory becomes the returned `Data`'s own storage: no zero fill first, no second
  /// buffer, no copy, one allocation. Otherwise, and when the file held fewer bytes, the memory
  /// is zeroed and freed. The caller has checked `count` against the file's size and the
  /// format's maximum.
  ///
  /// - Returns: The bytes, or `nil` when the file held fewer than `count` from `offset` or
  ///   `accept` returned `false`.
  /// - Throws: ``StoreFileError`` when `pread` fails.
  /// - Complexity: O(`count`): one `pread` (more only when the kernel returns less), then
  ///   `accept`.
  func readPayload(
    _ fd: FileDescriptor, count: Int, offset: Int64, path: String,
    accepting accept: (UnsafeMutableRawBufferPointer) -> Bool
  ) throws(StoreFileError) -> Data? {
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
    var handedOver = false
    defer {
      if !handedOver {
        Sodium.zero(memory)
        memory.deallocate()
      }
    }
    let filled = try run(path) { () throws(Errno) in
      try sys.preadAll(fd, into: memory, at: offset)
    }
    guard filled == count, accept(memory) else { return nil }
    handedOver = true
    guard let base = memory.baseAddress, count > 0 else {
      memory.deallocate()
      return Data()
    }
    return Data(
      bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
  }

  /// `fstatat` without following: what stands under `name`.
  func status(_ parent: StoreDirectory, _ name: String) throws(StoreFileError) -> FileStatus {
    try run(parent.path(of: name)) { () throws(Errno) in try sys.fstatat(parent.fd, name) }
  }

  func exists(_ parent: StoreDirectory, _ name: String) throws(StoreFileError) -> Bool {
    do {
      _ = try status(parent, name)
      return true
    } catch  where error.errno == .noSuchFileOrDirectory {
      return false
    }
  }

  func sync(_ fd: FileDescriptor, path: String) throws(StoreFileError) {
    try run(path) { () throws(Errno) in try sys.fsync(fd) }
  }

  /// One flush of the whole file system (`syncfs(2)`).
  func syncFileSystem(_ fd: FileDescriptor, path: String) throws(StoreFileError) {
    try run(path) { () throws(Errno) in try sys.syncfs(fd) }
  }

  func rename(
    _ fromParent: StoreDirectory, _ from: String, _ toParent: StoreDirectory, _ to: String
  ) throws(StoreFileError) {
    try run(toParent.path(of: to)) { () throws(Errno) in
      try sys.renameat(fromParent.fd, from, into: toParent.fd, as: to)
    }
  }

  /// Removes a file; a missing one is not an error.
  func unlink(_ parent: StoreDirectory, _ name: String) throws(StoreFileError) {
    do {
      try sys.unlinkat(parent.fd, name)
    } catch  where error == .noSuchFileOrDirectory {
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
  }

  /// Removes whatever stands under `name`, a directory tree included (online path only).
  func remove(_ parent: StoreDirectory, _ name: String) throws(StoreFileError) {
    try secure.removeEntry(name, in: parent)
  }

  /// `flock(LOCK_EX)`, waiting at most `limit` (`ETIMEDOUT` past it).
  func lockExclusive(_ fd: FileDescriptor, path: String, waitingAtMost limit: Duration)
    throws(StoreFileError)
  {
    try run(path) { () throws(Errno) in try sys.flock(fd, .exclusive, waitingAtMost: limit) }
  }

  /// `flock(LOCK_SH)`, waiting at most `limit` (`ETIMEDOUT` past it).
  func lockShared(_ fd: FileDescriptor, path: String, waitingAtMost limit: Duration)
    throws(StoreFileError)
  {
    try run(path) { () throws(Errno) in try sys.flock(fd, .shared, waitingAtMost: limit) }
  }

  func names(in directory: StoreDirectory) throws(StoreFileError) -> [String] {
    try run(directory.path) { () throws(Errno) in try sys.directoryEntries(directory.fd) }
  }
}
