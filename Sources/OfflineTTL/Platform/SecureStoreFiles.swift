/// An open directory of a store, with the path it was opened by (for messages).
@_spi(SystemCalls)
public struct StoreDirectory: Sendable {
  /// The open directory (`O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`).
  public let fd: FileDescriptor
  /// Its path as the store spells it.
  public let path: String

  /// Wraps an open directory.
  ///
  /// - Parameters:
  ///   - fd: The descriptor.
  ///   - path: Its path, for messages.
  public init(fd: FileDescriptor, path: String) {
    self.fd = fd
    self.path = path
  }

  /// The path of `name` inside this directory, for messages.
  ///
  /// - Parameter name: A name in the directory.
  /// - Returns: `path/name`.
  public func path(of name: String) -> String {
    path.hasSuffix("/") ? path + name : path + "/" + name
  }
}

/// A store file opened by ``SecureStoreFiles``, with what `fstat` said about it.
@_spi(SystemCalls)
public struct OpenedStoreFile: Sendable {
  /// The descriptor; the caller closes it.
  public let fd: FileDescriptor
  /// `fstat` of ``fd``: a regular file owned by the effective user that nobody else may write.
  public let status: FileStatus
}

/// The one way the stores open their paths (the cache store, the mark store): every open is
/// non-blocking (`O_NONBLOCK`), never follows a symbolic link (`O_NOFOLLOW`), is closed on exec
/// (`O_CLOEXEC`), and is checked with `fstat` on the descriptor before anything is read:
///
/// - a FIFO, socket, device or directory where a file belongs is
///   ``StoreFileError/Problem/notRegularFile(_:)``, at once: nothing waits on it;
/// - a file or directory owned by another user, or writable by group or others, is
///   ``StoreFileError/Problem/insecure(ownerID:permissions:effectiveUserID:)``;
/// - a file with another name besides its own (`st_nlink > 1`: a hard link made into the store
///   or out of it) is ``StoreFileError/Problem/hardLinked(linkCount:)``, so no write in place
///   (the clock mark's slots) reaches another name; ``openOrReplaceFile(_:in:_:)`` is how the
///   online path gives the store's name a new file of its own;
/// - the store directory is opened through its parent with `O_DIRECTORY | O_NOFOLLOW` on its
///   last name, after dropping trailing `/` and `/.`: no spelling (`link/`, `link/.`, `./link`)
///   follows a link in place of the store directory itself (its parents may be links);
/// - a new file is created with `O_CREAT | O_EXCL` (a new inode with one name) and given mode
///   0600 with `fchmod` on its descriptor; a new directory is given mode 0700 with `fchmodat`
///   by name (never following a link) before it is opened. Both modes are exact whatever the
///   caller's umask: a umask that removes the owner's bits (`umask 777`) would otherwise make
///   a directory that its owner cannot open, and files of mode 0000;
/// - only the online path (`repairing`) changes the mode of what it did not just create: it
///   gives the owner's bits back to a directory of this user that nobody else may write
///   (mode 0000 or 0500, left by a umask, cannot be opened or written), and read and write to
///   a lock file of this user; the offline path never changes a mode.
///
/// Every call goes through the ``Syscalls`` seam, so fault plans cover these steps too.
@_spi(SystemCalls)
public struct SecureStoreFiles: Sendable {
  /// The seam every call goes through.
  public let system: Syscalls

  /// The deepest directory tree ``removeEntry(_:in:)`` descends into (a deeper one is an error).
  public static let maximumRemovalDepth = 32

  /// Creates the helper over a seam.
  ///
  /// - Parameter system: The syscall seam (with a test's fault plan, or none).
  public init(system: Syscalls = Syscalls()) {
    self.system = system
  }

  /// Splits a store path into the directory that holds it and its last name, after removing
  /// empty components and trailing `.` components (`a/b/`, `a/b/.`, `a/b//.` all give `a` and
  /// `b`). `parent` is `nil` when the path has no last name to open through its parent (`.`,
  /// `/`, or a path ending in `..`): `.` and `/` are opened whole, a path ending in `..` is
  /// refused (``StoreFileError/Problem/endsInParentName``).
  ///
  /// - Parameter path: The store path as given.
  /// - Returns: The parent path (or `nil`) and the last name (or the whole normalized path).
  static func split(_ path: String) -> (parent: String?, name: String) {
    let absolute = path.hasPrefix("/")
    var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    while components.last == "." { components.removeLast() }
    guard let last = components.last else { return (nil, absolute ? "/" : ".") }
    if last == ".." { return (nil, (absolute ? "/" : "") + components.joined(separator: "/")) }
    let rest = components.dropLast().joined(separator: "/")
    let parent = absolute ? "/" + rest : (rest.isEmpty ? "." : rest)
    return (parent, last)
  }

  /// Opens a store directory by path, checked on its descriptor (see the type's summary).
  ///
  /// - Parameters:
  ///   - path: The store directory as the caller spells it.
  ///   - creating: Whether a missing directory is created (mode exactly 0700, whatever the
  ///     umask; its parent must exist).
  ///   - repairing: Whether the owner's bits (`rwx`) are given back to a directory of this
  ///     user that nobody else may write: online path only (see
  ///     ``openDirectory(_:in:creating:repairing:)``).
  /// - Returns: The open directory; close it with ``close(_:)``.
  /// - Throws: ``StoreFileError``: `system(ENOENT)` when it is missing (and not created),
  ///   `symbolicLink`, `notDirectory`, `insecure`, `endsInParentName` (a path ending in `..`,
  ///   refused before any system call), or another `system` error (`EACCES` for a directory of
  ///   this user that its owner's bits do not let it open, when not repairing).
  public func openDirectory(atPath path: String, creating: Bool, repairing: Bool = false)
    throws(StoreFileError) -> StoreDirectory
  {
    let (parentPath, name) = Self.split(path)
    guard let parentPath else {
      if name == ".." || name.hasSuffix("/..") {
        throw StoreFileError(.endsInParentName, path: path)
      }
      let fd: FileDescriptor
      do {
        fd = try system.open(name, [.readOnly, .directory, .nonBlocking])
      } catch {
        throw StoreFileError(.system(error), path: path)
      }
      let directory = StoreDirectory(fd: fd, path: path)
      do {
        let info = try status(fd, path: path)
        try checkOwnership(info, path: path)
        if repairing { try restoreOwnerBits(fd, info, path: path) }
      } catch {
        close(directory)
        throw error
      }
      return directory
    }
    let parentFD: FileDescriptor
    do {
      // The parent may be reached through links, and may be one (only the last name is not).
      parentFD = try system.openDirectory(followingLinksIn: parentPath, [.readOnly, .nonBlocking])
    } catch {
      // Names the parent: a store directory is made, never the directories above it.
      throw StoreFileError(.system(error), path: parentPath)
    }
    defer { system.closeIgnoringErrors(parentFD) }
    let opened = try openDirectory(
      name, in: StoreDirectory(fd: parentFD, path: parentPath), creating: creating,
      repairing: repairing)
    return StoreDirectory(fd: opened.fd, path: path)
  }

  /// Opens (and, when `creating`, makes) a directory of the store inside `parent`.
  ///
  /// A directory made here gets mode 0700 exactly, whatever the umask: `mkdirat(0700)`, then
  /// `fchmodat(0700)` on its name (never following a link) *before* it is opened, since a
  /// directory made under a umask that removes the owner's bits (mode 0000) cannot be opened by
  /// a user other than root. The name cannot be swapped in between by another user: the parent
  /// is a store directory of this user that nobody else may write, or (for the store directory
  /// itself) `open` and `fstat` on the descriptor check what was opened. Where `fchmodat`
  /// cannot work without following (no `/proc` on an old C library: `EOPNOTSUPP`), the
  /// directory is opened first and `fchmod`ed, which works for every umask that leaves the
  /// owner's read bit.
  ///
  /// - Parameters:
  ///   - name: Its name in `parent`.
  ///   - parent: An open directory of the store.
  ///   - creating: Whether a missing directory is created (mode 0700).
  ///   - repairing: Whether this is the online path, which gives the owner's bits back (adds
  ///     `rwx` for the owner, keeps the other bits) to a directory of this user that nobody
  ///     else may write: one it cannot open (mode 0000, `EACCES`) is changed by name first,
  ///     one it can open (0500, or anything as root) on its descriptor. A directory of another
  ///     user, or one that group or others may write, is still refused (`insecure`), never
  ///     changed.
  /// - Returns: The open directory.
  /// - Throws: ``StoreFileError`` as ``openDirectory(atPath:creating:repairing:)``.
  public func openDirectory(
    _ name: String, in parent: StoreDirectory, creating: Bool, repairing: Bool = false
  ) throws(StoreFileError) -> StoreDirectory {
    let path = parent.path(of: name)
    let flags: OpenFlags = [.readOnly, .directory, .nonBlocking]
    // Made here, but its mode could not be set by name: set on the descriptor once opened.
    var setModeOnDescriptor = false
    let fd: FileDescriptor
    do {
      fd = try system.openat(parent.fd, name, flags)
    } catch {
      if error == .noSuchFileOrDirectory && creating {
        var created = false
        do {
          try system.mkdirat(parent.fd, name, mode: 0o700)
          created = true
        } catch  where error == .fileExists {
        } catch {
          throw openFailure(error, name, in: parent)
        }
        if created {
          setModeOnDescriptor = try !setMode(0o700, of: name, in: parent)
        }
      } else if error == .permissionDenied && repairing {
        try restoreOwnerBits(name, in: parent)
      } else {
        throw openFailure(error, name, in: parent)
      }
      do {
        fd = try system.openat(parent.fd, name, flags)
      } catch {
        throw openFailure(error, name, in: parent)
      }
    }
    let directory = StoreDirectory(fd: fd, path: path)
    do throws(StoreFileError) {
      let info = try status(fd, path: path)
      try checkOwnership(info, path: path)
      if setModeOnDescriptor {
        do { try system.fchmod(fd, mode: 0o700) } catch {
          throw StoreFileError(.system(error), path: path)
        }
      } else if repairing {
        try restoreOwnerBits(fd, info, path: path)
      }
    } catch {
      close(directory)
      throw error
    }
    return directory
  }

  /// Opens a file of the store inside `parent` without waiting and checks it on the descriptor.
  ///
  /// A file this call creates gets mode 0600 exactly, whatever the umask: it is created with
  /// `O_CREAT | O_EXCL` and `fchmod`ed on its descriptor before anything else. `.create`
  /// without `.exclusive` (open or create, for lock files) is done as an open without `O_CREAT`
  /// and, when the name is missing, an exclusive create (tried again, a bounded number of
  /// times, when another process creates or removes the name in between), so that the file is
  /// only `fchmod`ed when this call made it.
  ///
  /// - Parameters:
  ///   - name: Its name in `parent`.
  ///   - parent: An open directory of the store.
  ///   - flags: Access mode and options (`.create` creates it with mode 0600); `O_NONBLOCK`,
  ///     `O_NOFOLLOW` and `O_CLOEXEC` are always added.
  /// - Returns: The descriptor and its status.
  /// - Throws: ``StoreFileError``: `system(ENOENT)` when missing, `symbolicLink`,
  ///   `notRegularFile` (also for a FIFO without a reader opened for writing, `ENXIO`),
  ///   `insecure`, `hardLinked` (nothing was read or written through it), or another `system`
  ///   error.
  public func openFile(_ name: String, in parent: StoreDirectory, _ flags: OpenFlags)
    throws(StoreFileError) -> OpenedStoreFile
  {
    guard flags.contains(.create), !flags.contains(.exclusive) else {
      return try openFileOnce(name, in: parent, flags)
    }
    let existing = flags.subtracting(.create)
    for _ in 0..<Self.maximumCreateAttempts {
      do {
        return try openFileOnce(name, in: parent, existing)
      } catch  where error.errno == .noSuchFileOrDirectory {}
      do {
        return try openFileOnce(name, in: parent, flags.union(.exclusive))
      } catch  where error.errno == .fileExists {}
    }
    return try openFileOnce(name, in: parent, existing)
  }

  /// How many times ``openFile(_:in:_:)`` tries "open, else create exclusively" while other
  /// processes create and remove the name in between (each round needs both to happen).
  static let maximumCreateAttempts = 8

  private func openFileOnce(_ name: String, in parent: StoreDirectory, _ flags: OpenFlags)
    throws(StoreFileError) -> OpenedStoreFile
  {
    let path = parent.path(of: name)
    let fd: FileDescriptor
    do {
      fd = try system.openat(parent.fd, name, flags.union(.nonBlocking), mode: 0o600)
    } catch
      where error == .tooManySymbolicLinks || error == .isDirectory
      || error == .noDeviceOrAddress
    {
      throw wrongType(name, in: parent, expectingDirectory: false, errno: error)
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
    do throws(StoreFileError) {
      if flags.contains([.create, .exclusive]) {
        // Made by this call: its mode is 0600 whatever the umask.
        do { try system.fchmod(fd, mode: 0o600) } catch {
          try? system.unlinkat(parent.fd, name)
          throw StoreFileError(.system(error), path: path)
        }
      }
      let info = try status(fd, path: path)
      guard info.kind == .regular else {
        throw StoreFileError(.notRegularFile(info.kind), path: path)
      }
      try checkOwnership(info, path: path)
      return OpenedStoreFile(fd: fd, status: info)
    } catch {
      system.closeIgnoringErrors(fd)
      throw error
    }
  }

  /// Opens a file of the store for the online path (an online sign-in's lock or record): when
  /// something other than a regular file stands under the name (a FIFO, a directory, a link) or
  /// the file has other names (a hard link), the name is removed and a new file is created with
  /// `O_CREAT | O_EXCL` (mode 0600). The other name of a hard-linked file keeps its bytes: the
  /// old file is never opened for writing. Another user's file, or one that group or others may
  /// write, is still refused (`insecure`). A file of this user that its owner's bits do not let
  /// it open (`EACCES`: mode 0000, left by a umask) is replaced the same way, and one it can
  /// open but whose owner lacks read or write (as root) gets those bits back with `fchmod`.
  ///
  /// - Parameters:
  ///   - name: Its name in `parent`.
  ///   - parent: An open directory of the store.
  ///   - flags: Access mode and options for the first open, as ``openFile(_:in:_:)``.
  /// - Returns: The descriptor and its status.
  /// - Throws: ``StoreFileError``, as ``openFile(_:in:_:)``.
  public func openOrReplaceFile(_ name: String, in parent: StoreDirectory, _ flags: OpenFlags)
    throws(StoreFileError) -> OpenedStoreFile
  {
    let opened: OpenedStoreFile
    do {
      opened = try openFile(name, in: parent, flags)
    } catch  where error.isWrongType || error.isHardLinked {
      try removeEntry(name, in: parent)
      return try openFile(name, in: parent, flags.union([.create, .exclusive]))
    } catch  where error.errno == .permissionDenied {
      // Another user's file, or one others may write, is `insecure` (never replaced); a file
      // of this user that it may not open is replaced.
      guard let info = try? system.fstatat(parent.fd, name), info.kind == .regular else {
        throw error
      }
      try checkOwnership(info, path: parent.path(of: name))
      try removeEntry(name, in: parent)
      return try openFile(name, in: parent, flags.union([.create, .exclusive]))
    }
    guard opened.status.permissions & 0o600 != 0o600 else { return opened }
    do {
      try system.fchmod(opened.fd, mode: opened.status.permissions | 0o600)
    } catch {
      system.closeIgnoringErrors(opened.fd)
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
    return opened
  }

  /// Creates a new private file with `O_CREAT | O_EXCL`, `fchmod`ed to mode 0600 (whatever the
  /// umask), after removing whatever stands under that name (a leftover temporary file, or
  /// anything else: only call it for names that hold nothing but temporary files).
  ///
  /// - Parameters:
  ///   - name: Its name in `parent`.
  ///   - parent: An open directory of the store.
  /// - Returns: The descriptor, open for writing.
  /// - Throws: ``StoreFileError``.
  public func createExclusive(_ name: String, in parent: StoreDirectory) throws(StoreFileError)
    -> FileDescriptor
  {
    try removeEntry(name, in: parent)
    let fd: FileDescriptor
    do {
      fd = try system.openat(
        parent.fd, name, [.writeOnly, .create, .exclusive, .nonBlocking], mode: 0o600)
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
    do {
      try system.fchmod(fd, mode: 0o600)
    } catch {
      system.closeIgnoringErrors(fd)
      try? system.unlinkat(parent.fd, name)
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
    return fd
  }

  /// Refuses a file or directory that is not owned by the effective user, or that group or
  /// others may write, and a file (not a directory) that has other names besides its own.
  ///
  /// - Parameters:
  ///   - status: Its `fstat`.
  ///   - path: Its path, for the error.
  /// - Throws: ``StoreFileError/Problem/insecure(ownerID:permissions:effectiveUserID:)``, or
  ///   ``StoreFileError/Problem/hardLinked(linkCount:)`` when `st_nlink > 1` (a count of 0, a
  ///   name removed or replaced while the file was open, is not refused: a reader that opened
  ///   the index or an item just before a sign-in renamed a new one over it reads a whole old
  ///   file).
  public func checkOwnership(_ status: FileStatus, path: String) throws(StoreFileError) {
    let user = system.effectiveUserID()
    guard status.ownerID == user, !status.isWritableByOthers else {
      throw StoreFileError(
        .insecure(ownerID: status.ownerID, permissions: status.permissions, effectiveUserID: user),
        path: path)
    }
    guard !status.hasOtherNames else {
      throw StoreFileError(.hardLinked(linkCount: status.linkCount), path: path)
    }
  }

  /// ``checkOwnership(_:path:)``, and also refuses a file that group or others may read: for a
  /// file that holds this user's evidence only and is always created 0600 (the clock mark
  /// record), any access of group or others is the same kind of problem as a write access.
  ///
  /// - Parameters:
  ///   - status: Its `fstat`.
  ///   - path: Its path, for the error.
  /// - Throws: As ``checkOwnership(_:path:)``; `insecure` also for a mode with any group or
  ///   other bit (0640, 0644, 0604, ...).
  public func checkPrivate(_ status: FileStatus, path: String) throws(StoreFileError) {
    try checkOwnership(status, path: path)
    guard !status.isAccessibleByOthers else {
      throw StoreFileError(
        .insecure(
          ownerID: status.ownerID, permissions: status.permissions,
          effectiveUserID: system.effectiveUserID()),
        path: path)
    }
  }

  /// Closes a directory opened here, ignoring errors.
  ///
  /// - Parameter directory: The directory.
  public func close(_ directory: StoreDirectory) {
    system.closeIgnoringErrors(directory.fd)
  }

  private func status(_ fd: FileDescriptor, path: String) throws(StoreFileError) -> FileStatus {
    do {
      return try system.fstat(fd)
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
  }

  /// The error for an open that failed because of the file's type: what `fstatat` (never
  /// following) finds under the name.
  func wrongType(
    _ name: String, in parent: StoreDirectory, expectingDirectory: Bool, errno: Errno
  ) -> StoreFileError {
    let path = parent.path(of: name)
    guard let info = try? system.fstatat(parent.fd, name) else {
      return StoreFileError(.system(errno), path: path)
    }
    if info.kind == .symbolicLink { return StoreFileError(.symbolicLink, path: path) }
    return StoreFileError(
      expectingDirectory ? .notDirectory(info.kind) : .notRegularFile(info.kind), path: path)
  }
}
