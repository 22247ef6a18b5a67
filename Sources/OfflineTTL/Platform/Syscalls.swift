#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one seam through which every file-system and lock call of every OfflineTTL module goes
/// (the role of
/// apple/swift-system's `Internals/Syscalls.swift`): typed arguments and results, `EINTR`
/// retried (never for `close`), `O_NOFOLLOW | O_CLOEXEC` added to every open, no descriptor
/// handed out as a standard one (0, 1, 2), and a per-instance
/// ``SyscallFaultPlan`` that tests use to fail any call with any ``Errno``.
///
/// Each store keeps one `Syscalls` value (pass the same plan to every component that should share
/// one script). Production code uses `Syscalls()`, which has no plan and costs one `nil` check per
/// call. No other file in the package calls these C functions; add a method here rather than
/// calling libc elsewhere, so fault injection keeps covering every step. What stays outside, and
/// why, is listed in `docs/syscall-seam.md`. Public under the `SystemCalls` SPI for the package's
/// other modules (the Secret Service backend, the command line); fault injection is under the
/// `Testing` SPI.
///
/// Methods throw ``Errno`` and never trap. Short reads and writes are returned as counts; use the
/// `…All` helpers in `Syscalls+Loops.swift` to loop.
@_spi(SystemCalls)
public struct Syscalls: Sendable {
  /// The fault plan consulted before (or after) every call, or `nil` in production.
  @_spi(Testing) public let faults: SyscallFaultPlan?

  /// Creates the seam that makes real calls only (production).
  public init() {
    self.faults = nil
  }

  /// Creates the seam with a test's fault plan.
  ///
  /// - Parameter faults: The plan every call consults; `nil` for real calls only.
  @_spi(Testing) public init(faults: SyscallFaultPlan?) {
    self.faults = faults
  }

  /// Runs `body`, retrying on `EINTR`, consulting the fault plan on each attempt.
  /// `body` returns the C result; `-1` means failure with `errno` set.
  @inline(__always)
  private func call<R: BinaryInteger>(
    _ kind: SyscallKind, retryingInterrupts: Bool = true, _ body: () -> R
  ) throws(Errno) -> R {
    while true {
      let fault = faults?.intercept(kind)
      if let fault, fault.timing == .beforeCall {
        if fault.errno == .interrupted && retryingInterrupts { continue }
        throw fault.errno
      }
      let result = body()
      if result == -1 {
        let error = Errno(rawValue: errno)
        if error == .interrupted && retryingInterrupts { continue }
        throw error
      }
      if let fault {
        if fault.errno == .interrupted && retryingInterrupts { continue }
        throw fault.errno
      }
      return result
    }
  }

  static func errorMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
  }

  // MARK: Opening and closing

  /// `open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)`.
  ///
  /// - Parameters:
  ///   - path: The path; its last component is never followed if it is a symbolic link
  ///     (`ELOOP`).
  ///   - flags: The access mode and options.
  ///   - mode: Permission bits for a created file (before the umask).
  /// - Returns: The new descriptor.
  /// - Throws: ``Errno``.
  public func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0) throws(Errno)
    -> FileDescriptor
  {
    let raw = flags.rawValue | O_NOFOLLOW | O_CLOEXEC
    return try Self.offStandard(try call(.open) { system_open(path, raw, mode) })
  }

  /// A new descriptor as this seam hands it out: never a standard one (0, 1, 2). In a process
  /// that runs with standard output (or input, or error) closed, the kernel gives the lowest free
  /// number to the next open, so a store file could become standard output and receive what
  /// the process prints (SQLite keeps its files off these numbers for the same reason). Such a
  /// descriptor is moved to 3 or above (`F_DUPFD_CLOEXEC`), and `/dev/null`, read-only, is left
  /// on the standard number it took: later opens cannot take it either, and writes to it fail
  /// with `EBADF` as they did while it was closed.
  ///
  /// - Throws: ``Errno`` when the descriptor cannot be moved (`EMFILE`); it is closed then.
  private static func offStandard(_ raw: Int32) throws(Errno) -> FileDescriptor {
    FileDescriptor(rawValue: try movedAbove(raw, lowest: 3))
  }

  /// `raw` when it is `lowest` or above; otherwise a duplicate at `lowest` or above, with
  /// `/dev/null` (read-only) left on `raw`. A `/dev/null` descriptor that lands on another
  /// closed standard number (0, 1, 2) stays there too. Tests pass a `lowest` above a descriptor
  /// of their own, so no standard descriptor of the test process is touched.
  ///
  /// - Throws: ``Errno`` when no duplicate can be made (`raw` is closed then).
  static func movedAbove(_ raw: Int32, lowest: Int32) throws(Errno) -> Int32 {
    guard raw >= 0, raw < lowest else { return raw }
    let moved = fcntl(raw, F_DUPFD_CLOEXEC, lowest)
    guard moved >= 0 else {
      let error = Errno(rawValue: errno)
      _ = system_close(raw)
      throw error
    }
    let null = system_open("/dev/null", O_RDONLY, 0)
    if null >= 0 {
      _ = dup2(null, raw)
      if null > 2 { _ = system_close(null) }
    } else {
      _ = system_close(raw)
    }
    return moved
  }

  /// Opens the directory `path` names, following symbolic links anywhere in it, its last
  /// component included: `open(path + "/.", flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)`.
  /// For the directory *above* a store or a key file, which may be reached through links
  /// (only the store directory and the key file themselves are never followed).
  ///
  /// - Parameters:
  ///   - path: A directory's path (`""` is the working directory).
  ///   - flags: The access mode and options (`.directory` is added).
  /// - Returns: The new descriptor.
  /// - Throws: ``Errno`` (`ENOTDIR` when the path, links followed, is not a directory).
  public func openDirectory(followingLinksIn path: String, _ flags: OpenFlags) throws(Errno)
    -> FileDescriptor
  {
    try open((path.isEmpty ? "." : path) + "/.", flags.union(.directory))
  }

  /// `openat(directory, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`.
  ///
  /// - Parameters:
  ///   - directory: An open directory.
  ///   - name: A name relative to it; a symbolic link as its last component is never followed.
  ///   - flags: The access mode and options.
  ///   - mode: Permission bits for a created file (before the umask).
  /// - Returns: The new descriptor.
  /// - Throws: ``Errno``.
  public func openat(
    _ directory: FileDescriptor, _ name: String, _ flags: OpenFlags, mode: UInt32 = 0
  ) throws(Errno) -> FileDescriptor {
    let raw = flags.rawValue | O_NOFOLLOW | O_CLOEXEC
    return try Self.offStandard(
      try call(.openat) { system_openat(directory.rawValue, name, raw, mode) })
  }

  /// `close(fd)`. Never retried: the descriptor is released even when an error is reported.
  ///
  /// - Parameter fd: The descriptor to close.
  /// - Throws: ``Errno`` (after releasing the descriptor).
  public func close(_ fd: FileDescriptor) throws(Errno) {
    let fault = faults?.intercept(.close)
    let result = system_close(fd.rawValue)
    if let fault { throw fault.errno }
    if result == -1 { throw Errno(rawValue: errno) }
  }

  // MARK: Reading and writing

  /// `read(fd, buffer, count)`.
  ///
  /// - Returns: Bytes read; `0` at end of file.
  public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno)
    -> Int
  {
    try call(.read) { system_read(fd.rawValue, buffer.baseAddress, buffer.count) }
  }

  /// `poll` of one descriptor for input with a zero timeout: whether it has anything to read
  /// now, without waiting and without reading it.
  ///
  /// - Parameter fd: The descriptor.
  /// - Returns: `true` when a read would return data (`POLLIN`), `false` when it would wait.
  /// - Throws: ``Errno``; `EBADF` when the descriptor is not open or reports an error
  ///   (`POLLNVAL`, `POLLERR`, `POLLHUP` without `POLLIN`).
  public func hasInput(_ fd: FileDescriptor) throws(Errno) -> Bool {
    var entry = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
    guard try call(.poll, { system_poll(&entry) }) > 0 else { return false }
    if entry.revents & Int16(POLLIN) != 0 { return true }
    throw Errno(rawValue: EBADF)
  }

  /// One `poll` with a zero timeout of a change watch (for input) and of a mount table opened
  /// from `/proc/self/mountinfo` (for `POLLPRI`, which the kernel raises once after each change
  /// of this process's mounts, and clears for this descriptor by reporting it). Counted as
  /// ``SyscallKind/poll``.
  ///
  /// - Returns: Whether the watch has input, and whether the mount table changed.
  /// - Throws: ``Errno``; `EBADF` when either descriptor reports an error other than a change.
  public func pollWatchAndMounts(_ watch: FileDescriptor, mountTable: FileDescriptor)
    throws(Errno) -> (input: Bool, mountsChanged: Bool)
  {
    var entries = (
      pollfd(fd: watch.rawValue, events: Int16(POLLIN), revents: 0),
      pollfd(fd: mountTable.rawValue, events: Int16(POLLPRI), revents: 0)
    )
    let ready = try withUnsafeMutableBytes(of: &entries) { raw throws(Errno) -> Int32 in
      let first = raw.baseAddress!.assumingMemoryBound(to: pollfd.self)
      return try call(.poll) { system_poll(first, count: 2) }
    }
    guard ready > 0 else { return (false, false) }
    let input = entries.0.revents & Int16(POLLIN) != 0
    // The mount table reports a change as POLLPRI together with POLLERR.
    let mounts = entries.1.revents & Int16(POLLPRI) != 0
    guard input || mounts else { throw Errno(rawValue: EBADF) }
    return (input, mounts)
  }

  /// One `poll` with a zero timeout of a change watch `fd` (for input), of the mount table
  /// `mounts` when there is one (for a change, as ``pollWatchAndMounts(_:mountTable:)``), and of a
  /// joined watch's change watch (input) and mount table (`POLLPRI`), whose `revents` are
  /// returned as they are (``JoinedChangeWatch``). Counted as ``SyscallKind/poll``.
  ///
  /// - Returns: For `fd` and `mounts`, whether `fd` has input and whether the mount table
  ///   changed, or `EBADF` when either is not open or `fd` reports an error; the joined descriptors'
  ///   `revents`, or `POLLNVAL` for both when the `poll` itself failed.
  func hasInput(
    _ fd: FileDescriptor, orMountChange mounts: FileDescriptor?,
    joining joined: (watch: FileDescriptor, mounts: FileDescriptor)
  ) -> (found: Result<(input: Bool, mountsChanged: Bool), Errno>, watch: Int16, mounts: Int16) {
    var entries = (
      pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0),
      // A negative descriptor is left out by `poll` (its `revents` stay 0).
      pollfd(fd: mounts?.rawValue ?? -1, events: Int16(POLLPRI), revents: 0),
      pollfd(fd: joined.watch.rawValue, events: Int16(POLLIN), revents: 0),
      pollfd(fd: joined.mounts.rawValue, events: Int16(POLLPRI), revents: 0)
    )
    do throws(Errno) {
      _ = try call(.poll) {
        withUnsafeMutableBytes(of: &entries) { raw in
          system_poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), count: 4)
        }
      }
    } catch {
      return (.failure(error), Int16(POLLNVAL), Int16(POLLNVAL))
    }
    let found: Result<(input: Bool, mountsChanged: Bool), Errno>
    let changed = entries.1.revents & Int16(POLLPRI | POLLERR) != 0
    if entries.1.revents & Int16(POLLNVAL) != 0 {
      found = .failure(Errno(rawValue: EBADF))
    } else if entries.0.revents == 0 {
      found = .success((false, changed))
    } else if entries.0.revents & Int16(POLLIN) != 0 {
      found = .success((true, changed))
    } else {
      found = .failure(Errno(rawValue: EBADF))
    }
    return (found, entries.2.revents, entries.3.revents)
  }

  /// `pread(fd, buffer, count, offset)`.
  ///
  /// - Returns: Bytes read; `0` at end of file.
  public func pread(
    _ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
  ) throws(Errno) -> Int {
    try call(.pread) { system_pread(fd.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
  }

  /// `write(fd, buffer, count)`.
  ///
  /// - Returns: Bytes written (may be short).
  public func write(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    try call(.write) { system_write(fd.rawValue, buffer.baseAddress, buffer.count) }
  }

  /// `pwrite(fd, buffer, count, offset)`.
  ///
  /// - Returns: Bytes written (may be short).
  public func pwrite(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, at offset: Int64)
    throws(Errno) -> Int
  {
    try call(.pwrite) {
      system_pwrite(fd.rawValue, buffer.baseAddress, buffer.count, off_t(offset))
    }
  }

  /// `ftruncate(fd, length)`.
  public func ftruncate(_ fd: FileDescriptor, to length: Int64) throws(Errno) {
    _ = try call(.ftruncate) { system_ftruncate(fd.rawValue, off_t(length)) }
  }

  // MARK: Durability

  /// `fsync(fd)`: data and metadata durable. On a directory, makes its entries durable.
  public func fsync(_ fd: FileDescriptor) throws(Errno) {
    _ = try call(.fsync) { system_fsync(fd.rawValue) }
  }

  /// `fdatasync(fd)`: data (and the metadata needed to read it) durable. On Darwin this is
  /// `fsync`.
  public func fdatasync(_ fd: FileDescriptor) throws(Errno) {
    #if canImport(Glibc)
      _ = try call(.fdatasync) { system_fdatasync(fd.rawValue) }
    #else
      _ = try call(.fdatasync) { system_fsync(fd.rawValue) }
    #endif
  }

  // MARK: Names

  /// `getcwd(3)`: the working directory, as ``FileSystemName/path(fromBytes:)`` spells it (a
  /// component that is not valid UTF-8 is an escape, never decoded with U+FFFD).
  ///
  /// - Returns: The absolute path of the working directory.
  /// - Throws: ``Errno``: `ENOENT` when it was removed, `EACCES`, `ENOMEM`.
  /// - Complexity: O(path length); a path longer than 4 KiB retries with twice the buffer.
  public func currentDirectory() throws(Errno) -> String {
    var bytes: [UInt8] = []
    _ = try call(.getcwd) { () -> Int32 in
      var size = 4096
      while true {
        var buffer = [CChar](repeating: 0, count: size)
        if getcwd(&buffer, size) != nil {
          bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
          return 0
        }
        guard errno == ERANGE, size < 1 << 20 else { return -1 }
        size *= 2
      }
    }
    return FileSystemName.path(fromBytes: bytes)
  }

  /// `realpath(3)`: `path` with every symbolic link, `.` and `..` resolved, as
  /// ``FileSystemName/path(fromBytes:)`` spells it.
  ///
  /// - Parameter path: A path whose components may be escapes; every component must exist.
  /// - Returns: The absolute path with no symbolic link in it.
  /// - Throws: ``Errno``: `ENOENT`, `ENOTDIR`, `EACCES`, `ELOOP`, `ENAMETOOLONG`.
  /// - Complexity: One lookup per component, and per symbolic link met.
  public func realPath(_ path: String) throws(Errno) -> String {
    var bytes: [UInt8] = []
    _ = try call(.realpath) { () -> Int32 in
      FileSystemName.withCString(path) { pointer in
        guard let resolved = realpath(pointer, nil) else { return -1 }
        defer { free(resolved) }
        bytes = Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
        return 0
      }
    }
    return FileSystemName.path(fromBytes: bytes)
  }

  /// `rename(from, to)`: atomically replaces `to` (a symbolic link at `to` is replaced, never
  /// followed).
  public func rename(_ from: String, to: String) throws(Errno) {
    _ = try call(.rename) { system_rename(from, to) }
  }

  /// `renameat(directory, from, directory, to)`.
  public func renameat(_ directory: FileDescriptor, _ from: String, to: String) throws(Errno) {
    _ = try call(.renameat) {
      system_renameat(directory.rawValue, from, directory.rawValue, to)
    }
  }

  /// `unlink(path)`.
  public func unlink(_ path: String) throws(Errno) {
    _ = try call(.unlink) { system_unlink(path) }
  }

  /// `unlinkat(directory, name, 0)`: removes a file (never a directory).
  public func unlinkat(_ directory: FileDescriptor, _ name: String) throws(Errno) {
    _ = try call(.unlinkat) { system_unlinkat(directory.rawValue, name, 0) }
  }

  /// `unlinkat(directory, name, AT_REMOVEDIR)`: removes an empty directory (counted as
  /// ``SyscallKind/unlinkat``).
  public func removeDirectoryAt(_ directory: FileDescriptor, _ name: String) throws(Errno) {
    _ = try call(.unlinkat) { system_unlinkat(directory.rawValue, name, AT_REMOVEDIR) }
  }

  /// `mkdir(path, mode)`.
  public func mkdir(_ path: String, mode: UInt32) throws(Errno) {
    _ = try call(.mkdir) { system_mkdir(path, mode_t(mode)) }
  }

  /// `mkdirat(directory, name, mode)`.
  public func mkdirat(_ directory: FileDescriptor, _ name: String, mode: UInt32) throws(Errno) {
    _ = try call(.mkdirat) { system_mkdirat(directory.rawValue, name, mode_t(mode)) }
  }

  /// `fchmod(fd, mode)`.
  public func fchmod(_ fd: FileDescriptor, mode: UInt32) throws(Errno) {
    _ = try call(.fchmod) { system_fchmod(fd.rawValue, mode_t(mode)) }
  }

  /// `fchmodat(directory, name, mode, AT_SYMLINK_NOFOLLOW)`: sets the mode of the entry `name`
  /// without opening it (so it works on a directory whose owner bits the umask removed, which
  /// cannot be opened) and without following a symbolic link under that name (`EOPNOTSUPP`:
  /// a link's own mode cannot be changed on Linux). On Linux the C library does this through
  /// `/proc/self/fd` (glibc 2.32 and later) or `fchmodat2(2)`; where neither is available it
  /// fails with `EOPNOTSUPP` (or `ENOSYS`), and the caller falls back to opening the entry and
  /// ``fchmod(_:mode:)``.
  public func fchmodat(_ directory: FileDescriptor, _ name: String, mode: UInt32) throws(Errno) {
    _ = try call(.fchmodat) {
      system_fchmodat(directory.rawValue, name, mode_t(mode), AT_SYMLINK_NOFOLLOW)
    }
  }

  /// `linkat(directory, from, directory, to, 0)`: gives the file `from` a second name `to`,
  /// failing with `EEXIST` when `to` exists (never replacing it, unlike `renameat`). Used to
  /// publish a fully written file only if no other process published one first.
  public func linkat(_ directory: FileDescriptor, _ from: String, to: String) throws(Errno) {
    _ = try call(.linkat) { system_linkat(directory.rawValue, from, directory.rawValue, to) }
  }

  /// `openat(directory, ".", O_TMPFILE | O_WRONLY, mode)`: a new regular file in `directory`
  /// that has no name (Linux 3.11 and later, on file systems that support it), so a process
  /// killed before ``linkat(_:into:as:)`` gives it one leaves nothing behind. Counted as
  /// ``SyscallKind/openat``.
  ///
  /// - Returns: The file's descriptor, open for writing.
  /// - Throws: ``Errno``; `EOPNOTSUPP` or `EISDIR` where unnamed files are not supported
  ///   (`ENOSYS` on other platforms): the caller falls back to a named temporary file.
  public func openUnnamedFile(in directory: FileDescriptor, mode: UInt32) throws(Errno)
    -> FileDescriptor
  {
    #if os(Linux)
      // O_TMPFILE (`__O_TMPFILE | O_DIRECTORY`), spelled out: Swift does not import the macro.
      let raw = 0o20_000_000 | O_DIRECTORY | O_WRONLY | O_CLOEXEC
      return try Self.offStandard(
        try call(.openat) { system_openat(directory.rawValue, ".", raw, mode) })
    #else
      throw Errno(rawValue: ENOSYS)
    #endif
  }

  /// `linkat(AT_FDCWD, "/proc/self/fd/<file>", directory, name, AT_SYMLINK_FOLLOW)`: gives the
  /// open file `file` (from ``openUnnamedFile(in:mode:)``) the name `name`, failing with `EEXIST`
  /// when `name` exists (never replacing it). Counted as ``SyscallKind/linkat``.
  public func linkat(_ file: FileDescriptor, into directory: FileDescriptor, as name: String)
    throws(Errno)
  {
    #if os(Linux)
      _ = try call(.linkat) {
        Glibc.linkat(
          AT_FDCWD, "/proc/self/fd/\(file.rawValue)", directory.rawValue, name, AT_SYMLINK_FOLLOW)
      }
    #else
      throw Errno(rawValue: ENOSYS)
    #endif
  }

  /// `renameat(fromDirectory, from, toDirectory, to)`: atomically moves a name between two
  /// directories of one file system, replacing `to`.
  public func renameat(
    _ fromDirectory: FileDescriptor, _ from: String, into toDirectory: FileDescriptor,
    as to: String
  ) throws(Errno) {
    _ = try call(.renameat) {
      system_renameat(fromDirectory.rawValue, from, toDirectory.rawValue, to)
    }
  }

  /// `syncfs(fd)`: one flush of the whole file system holding `fd`, making every file written
  /// before it durable (instead of one `fsync` per file). On Darwin, `sync()` followed by
  /// `fsync(fd)`.
  public func syncfs(_ fd: FileDescriptor) throws(Errno) {
    #if canImport(Glibc)
      _ = try call(.syncfs) { system_syncfs(fd.rawValue) }
    #else
      _ = try call(.syncfs) { () -> Int32 in
        sync()
        return system_fsync(fd.rawValue)
      }
    #endif
  }

  /// The names in an open directory, except `.` and `..` (`dup` + `fdopendir` + `readdir`).
  /// `directory` stays open and is not moved. A name that is not valid UTF-8 is given as its
  /// escape (``FileSystemName``), which every call of this seam turns back into its bytes.
  ///
  /// - Complexity: O(entries).
  public func directoryEntries(_ directory: FileDescriptor) throws(Errno) -> [String] {
    var names: [String] = []
    _ = try call(.readdir) { () -> Int32 in
      names = []
      let copy = dup(directory.rawValue)
      guard copy >= 0 else { return -1 }
      guard let stream = fdopendir(copy) else {
        let saved = errno
        _ = system_close(copy)
        errno = saved
        return -1
      }
      defer { closedir(stream) }
      rewinddir(stream)
      while true {
        errno = 0
        guard let entry = readdir(stream) else { return errno == 0 ? 0 : -1 }
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          FileSystemName.name(
            fromEntry: UnsafeRawBufferPointer(rebasing: raw.prefix(while: { $0 != 0 })))
        }
        if name != "." && name != ".." { names.append(name) }
      }
    }
    return names
  }

  // MARK: Status and locks

  /// `fstat(fd)`.
  public func fstat(_ fd: FileDescriptor) throws(Errno) -> FileStatus {
    var status = stat()
    _ = try call(.fstat) { system_fstat(fd.rawValue, &status) }
    return FileStatus(status)
  }

  /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)`: describes a symbolic link itself.
  public func fstatat(_ directory: FileDescriptor, _ name: String) throws(Errno) -> FileStatus {
    var status = stat()
    _ = try call(.fstatat) {
      system_fstatat(directory.rawValue, name, &status, AT_SYMLINK_NOFOLLOW)
    }
    return FileStatus(status)
  }

  /// `fstat(fd)` without asking for the file's times: on Linux, `statx(fd, "", AT_EMPTY_PATH,
  /// type | mode | nlink | uid | ino | size)`; elsewhere `fstat`. Counted as ``SyscallKind/fstat``.
  /// The returned status has zero times.
  ///
  /// Why: on Linux 6.13 and later a file system with multigrain timestamps (ext4, XFS, btrfs,
  /// tmpfs) gives a file a fresh fine-grained change and modification time at the next write
  /// only once someone has asked for its times; a write that changes the times dirties the inode,
  /// and on ext4 the next `fdatasync` then writes the inode's block as well as the data. A file
  /// that is checked before each write in place (the clock-mark record) is checked with this.
  ///
  /// - Parameter fd: The open file.
  /// - Returns: Kind, permissions, size, owner, device and inode.
  /// - Throws: ``Errno``.
  public func fstatWithoutTimes(_ fd: FileDescriptor) throws(Errno) -> FileStatus {
    #if canImport(Glibc)
      if let statx = StatxCall.function {
        var buffer = StatxCall.empty()
        _ = try call(.fstat) {
          withUnsafeMutableBytes(of: &buffer) {
            let buffer = $0.baseAddress!
            return "".withCString {
              statx(fd.rawValue, $0, StatxCall.emptyPath, StatxCall.mask, buffer)
            }
          }
        }
        return FileStatus(buffer)
      }
    #endif
    return try fstat(fd)
  }

  /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)` without asking for the file's times
  /// (`statx` on Linux, as ``fstatWithoutTimes(_:)``). Counted as ``SyscallKind/fstatat``.
  ///
  /// - Parameters:
  ///   - directory: An open directory.
  ///   - name: A name in it; a symbolic link is described, never followed.
  /// - Returns: Kind, permissions, size, owner, device and inode; zero times.
  /// - Throws: ``Errno``.
  public func fstatatWithoutTimes(_ directory: FileDescriptor, _ name: String) throws(Errno)
    -> FileStatus
  {
    #if canImport(Glibc)
      if let statx = StatxCall.function {
        var buffer = StatxCall.empty()
        _ = try call(.fstatat) {
          withUnsafeMutableBytes(of: &buffer) {
            let buffer = $0.baseAddress!
            return FileSystemName.withCString(name) {
              statx(directory.rawValue, $0, AT_SYMLINK_NOFOLLOW, StatxCall.mask, buffer)
            }
          }
        }
        return FileStatus(buffer)
      }
    #endif
    return try fstatat(directory, name)
  }

  /// `lstat(path)` (through `fstatat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW)`; counted as
  /// ``SyscallKind/fstatat``).
  public func lstat(_ path: String) throws(Errno) -> FileStatus {
    var status = stat()
    _ = try call(.fstatat) { system_fstatat(AT_FDCWD, path, &status, AT_SYMLINK_NOFOLLOW) }
    return FileStatus(status)
  }

  /// `geteuid()`: the effective user id (never fails; not a fault point).
  public func effectiveUserID() -> UInt32 {
    UInt32(geteuid())
  }

  /// `nanosleep`: pauses the calling thread for about `nanoseconds` (longer when the scheduler
  /// is late; shorter when a signal interrupts it, which is not an error). Never fails; not a
  /// fault point.
  ///
  /// - Parameter nanoseconds: How long to pause, in nanoseconds; zero or less returns at once.
  public func pause(nanoseconds: Int64) {
    guard nanoseconds > 0 else { return }
    var request = timespec(
      tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    _ = nanosleep(&request, nil)
  }

  /// `CLOCK_MONOTONIC` in nanoseconds, for measuring a wait (never fails; not a fault point;
  /// `0` if the clock cannot be read, which leaves the wait to the sum of its pauses).
  func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    guard clock_gettime(CLOCK_MONOTONIC, &spec) == 0 else { return 0 }
    return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
  }

  /// `flock(fd, operation)`. The lock belongs to the open file description: two descriptors
  /// opened separately exclude each other even within one process; `dup`ed ones share it.
  public func flock(_ fd: FileDescriptor, _ operation: LockOperation) throws(Errno) {
    _ = try call(.flock) { system_flock(fd.rawValue, operation.rawValue) }
  }

  /// `flock(fd, operation)` that reports `EINTR` instead of making the call again: for a
  /// blocking wait that a signal ends (`Syscalls.flock(_:_:waitingAtMost:)`).
  func flockReportingInterrupts(_ fd: FileDescriptor, _ operation: LockOperation) throws(Errno) {
    _ = try call(.flock, retryingInterrupts: false) {
      system_flock(fd.rawValue, operation.rawValue)
    }
  }

  // MARK: Watching for changes (Linux)

  /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`: a new change-watch descriptor whose reads never
  /// wait. Counted as ``SyscallKind/inotify``.
  ///
  /// - Returns: The descriptor.
  /// - Throws: ``Errno``; `ENOSYS` where the platform has no inotify.
  public func inotifyInit() throws(Errno) -> FileDescriptor {
    #if os(Linux)
      return try Self.offStandard(
        try call(.inotify) { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
    #else
      throw Errno(rawValue: ENOSYS)
    #endif
  }

  /// `inotify_add_watch(fd, path, mask)`. Counted as ``SyscallKind/inotify``.
  ///
  /// - Parameters:
  ///   - fd: A descriptor from ``inotifyInit()``.
  ///   - path: What to watch (`/proc/self/fd/N` watches the file an open descriptor names).
  ///   - mask: The `IN_*` events (and options such as `IN_DONT_FOLLOW`).
  /// - Returns: The watch descriptor.
  /// - Throws: ``Errno``; `ENOSYS` where the platform has no inotify.
  public func inotifyAddWatch(_ fd: FileDescriptor, _ path: String, mask: UInt32) throws(Errno)
    -> Int32
  {
    #if os(Linux)
      return try call(.inotify) {
        FileSystemName.withCString(path) { inotify_add_watch(fd.rawValue, $0, mask) }
      }
    #else
      throw Errno(rawValue: ENOSYS)
    #endif
  }

  /// `fstatfs(fd)`'s `f_type`: the magic number of the file system that holds the open file
  /// (`EXT4_SUPER_MAGIC`, `TMPFS_MAGIC`, …), or the type a fault plan reports instead
  /// (`SyscallFaultPlan.reportedFileSystemType`). Counted as ``SyscallKind/fstatfs``.
  ///
  /// - Parameter fd: An open file or directory.
  /// - Returns: `f_type`.
  /// - Throws: ``Errno``; `ENOSYS` where it is not available (not Linux on a 64-bit CPU).
  public func fileSystemType(_ fd: FileDescriptor) throws(Errno) -> Int64 {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      // `struct statfs` is 120 bytes on these CPUs and begins with `f_type` (a `long`).
      var buffer = (
        UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
        UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
        UInt64(0)
      )
      _ = try call(.fstatfs) {
        withUnsafeMutableBytes(of: &buffer) { system_fstatfs(fd.rawValue, $0.baseAddress!) }
      }
      return faults?.reportedFileSystemType ?? Int64(bitPattern: buffer.0)
    #else
      throw Errno(rawValue: ENOSYS)
    #endif
  }
}

#if os(Linux) && (arch(x86_64) || arch(arm64))
  /// `fstatfs(2)`, which Swift's Glibc module does not import (`sys/vfs.h`).
  @_silgen_name("fstatfs")
  private func system_fstatfs(_ fd: Int32, _ buffer: UnsafeMutableRawPointer) -> Int32
#endif

// The C functions, under names that the seam's methods do not shadow. Only this file calls them.
// A path goes to C through `FileSystemName.withCString`, which hands a native string's own bytes
// (or a copy on the stack for a short one) to the call, and the bytes of an escaped name
// (`FileSystemName`) when the path holds one; the implicit `String` to pointer conversion copies
// it into a new heap array on every call.
private func system_open(_ path: String, _ flags: Int32, _ mode: UInt32) -> Int32 {
  FileSystemName.withCString(path) { open($0, flags, mode_t(mode)) }
}
private func system_openat(_ dir: Int32, _ name: String, _ flags: Int32, _ mode: UInt32) -> Int32 {
  FileSystemName.withCString(name) { openat(dir, $0, flags, mode_t(mode)) }
}
private func system_close(_ fd: Int32) -> Int32 { close(fd) }
private func system_poll(_ entry: UnsafeMutablePointer<pollfd>, count: Int = 1) -> Int32 {
  poll(entry, nfds_t(count), 0)
}
private func system_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(fd, buf, count)
}
private func system_pread(
  _ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ count: Int, _ offset: off_t
) -> Int {
  pread(fd, buf, count, offset)
}
private func system_write(_ fd: Int32, _ buf: UnsafeRawPointer?, _ count: Int) -> Int {
  write(fd, buf, count)
}
private func system_pwrite(
  _ fd: Int32, _ buf: UnsafeRawPointer?, _ count: Int, _ offset: off_t
) -> Int {
  pwrite(fd, buf, count, offset)
}
private func system_ftruncate(_ fd: Int32, _ length: off_t) -> Int32 { ftruncate(fd, length) }
private func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
#if canImport(Glibc)
  /// `syncfs(2)`, which Glibc declares only under `_GNU_SOURCE`.
  @_silgen_name("syncfs")
  private func system_syncfs(_ fd: Int32) -> Int32
#endif
#if canImport(Glibc)
  private func system_fdatasync(_ fd: Int32) -> Int32 { fdatasync(fd) }
#endif
private func system_rename(_ from: String, _ to: String) -> Int32 {
  FileSystemName.withCString(from) { old in FileSystemName.withCString(to) { rename(old, $0) } }
}
private func system_renameat(_ dir: Int32, _ from: String, _ dir2: Int32, _ to: String) -> Int32 {
  FileSystemName.withCString(from) { old in
    FileSystemName.withCString(to) { renameat(dir, old, dir2, $0) }
  }
}
private func system_unlink(_ path: String) -> Int32 {
  FileSystemName.withCString(path) { unlink($0) }
}
private func system_linkat(_ dir: Int32, _ from: String, _ dir2: Int32, _ to: String) -> Int32 {
  FileSystemName.withCString(from) { old in
    FileSystemName.withCString(to) { linkat(dir, old, dir2, $0, 0) }
  }
}
private func system_unlinkat(_ dir: Int32, _ name: String, _ flags: Int32) -> Int32 {
  FileSystemName.withCString(name) { unlinkat(dir, $0, flags) }
}
private func system_mkdir(_ path: String, _ mode: mode_t) -> Int32 {
  FileSystemName.withCString(path) { mkdir($0, mode) }
}
private func system_mkdirat(_ dir: Int32, _ name: String, _ mode: mode_t) -> Int32 {
  FileSystemName.withCString(name) { mkdirat(dir, $0, mode) }
}
private func system_fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 { fchmod(fd, mode) }
private func system_fchmodat(_ dir: Int32, _ name: String, _ mode: mode_t, _ flags: Int32) -> Int32
{
  FileSystemName.withCString(name) { fchmodat(dir, $0, mode, flags) }
}
private func system_fstat(_ fd: Int32, _ status: inout stat) -> Int32 { fstat(fd, &status) }
private func system_fstatat(
  _ dir: Int32, _ name: String, _ status: inout stat, _ flags: Int32
) -> Int32 {
  FileSystemName.withCString(name) { fstatat(dir, $0, &status, flags) }
}
private func system_flock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }

#if canImport(Glibc)
  /// `statx(2)`, which Swift's Glibc module does not import (it is declared only under
  /// `_GNU_SOURCE`): looked up once with `dlsym`, `nil` on a C library without it (the seam then
  /// falls back to `fstat`). The buffer is `struct statx` (256 bytes; the offsets below are the
  /// kernel's stable layout, `linux/stat.h`).
  private enum StatxCall {
    typealias Function =
      @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32
    static let function: Function? = {
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "statx") else {
        return nil
      }
      return unsafeBitCast(symbol, to: Function.self)
    }()
    /// `AT_EMPTY_PATH`.
    static let emptyPath: Int32 = 0x1000
    /// `STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_INO | STATX_SIZE`: no times.
    static let mask: UInt32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x100 | 0x200
    /// 256 bytes, 8-aligned.
    typealias Buffer = (
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    )
  }

  extension StatxCall {
    static func empty() -> Buffer {
      (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
      )
    }
  }

  extension FileStatus {
    /// From a `struct statx` filled for ``StatxCall/mask``: the device number encoded as
    /// glibc's `makedev`, so it compares equal to `st_dev` of the same file.
    fileprivate init(_ buffer: StatxCall.Buffer) {
      var buffer = buffer
      let (links, uid, mode, inode, size, major, minor) = withUnsafeBytes(of: &buffer) { raw in
        (
          raw.load(fromByteOffset: 16, as: UInt32.self),
          raw.load(fromByteOffset: 20, as: UInt32.self),
          raw.load(fromByteOffset: 28, as: UInt16.self),
          raw.load(fromByteOffset: 32, as: UInt64.self),
          raw.load(fromByteOffset: 40, as: UInt64.self),
          UInt64(raw.load(fromByteOffset: 136, as: UInt32.self)),
          UInt64(raw.load(fromByteOffset: 140, as: UInt32.self))
        )
      }
      var status = stat()
      status.st_mode = mode_t(mode)
      status.st_uid = uid_t(uid)
      status.st_nlink = nlink_t(links)
      status.st_ino = ino_t(inode)
      status.st_size = off_t(Int64(bitPattern: size))
      status.st_dev = dev_t(
        ((major & 0xfff) << 8) | ((major & 0xffff_f000) << 32) | (minor & 0xff)
          | ((minor & 0xffff_ff00) << 12))
      self.init(status)
    }
  }
#endif

extension FileStatus {
  fileprivate init(_ status: stat) {
    let type = status.st_mode & S_IFMT
    let kind: Kind =
      switch type {
      case S_IFREG: .regular
      case S_IFDIR: .directory
      case S_IFLNK: .symbolicLink
      case S_IFIFO: .fifo
      case S_IFSOCK: .socket
      case S_IFCHR, S_IFBLK: .device
      default: .other
      }
    self.init(
      kind: kind, permissions: UInt32(status.st_mode & 0o7777), size: Int64(status.st_size),
      ownerID: UInt32(status.st_uid), device: UInt64(status.st_dev),
      inode: UInt64(status.st_ino),
      changeTimeNanoseconds: Int64(status.st_ctim.tv_sec) &* 1_000_000_000
        &+ Int64(status.st_ctim.tv_nsec),
      modificationTimeNanoseconds: Int64(status.st_mtim.tv_sec) &* 1_000_000_000
        &+ Int64(status.st_mtim.tv_nsec),
      linkCount: UInt64(status.st_nlink))
  }
}
