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
///   ``StoreFileError/Problem/insecure(ownerID:permissions:effectiveUserID:)``; only a
///   directory this process has just created is tightened (to 0700);
/// - a file with another name besides its own (`st_nlink > 1`: a hard link made into the store
///   or out of it) is ``StoreFileError/Problem/hardLinked(linkCount:)``, so no write in place
///   (the clock mark's slots) reaches another name; ``openOrReplaceFile(_:in:_:)`` is how the
///   online path gives the store's name a new file of its own;
/// - the store directory is opened through its parent with `O_DIRECTORY | O_NOFOLLOW` on its
///   last name, after dropping trailing `/` and `/.`: no spelling (`link/`, `link/.`, `./link`)
///   follows a link in place of the store directory itself (its parents may be links);
/// - a new file is created with `O_CREAT | O_EXCL`, mode 0600 (a new inode with one name).
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
  /// `/`, or a path ending in `..`): such a path is opened whole.
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
  ///   - creating: Whether a missing directory is created (mode 0700; its parent must exist).
  /// - Returns: The open directory; close it with ``close(_:)``.
  /// - Throws: ``StoreFileError``: `system(ENOENT)` when it is missing (and not created),
  ///   `symbolicLink`, `notDirectory`, `insecure`, or another `system` error.
  public func openDirectory(atPath path: String, creating: Bool) throws(StoreFileError)
    -> StoreDirectory
  {
    let (parentPath, name) = Self.split(path)
    guard let parentPath else {
      let fd: FileDescriptor
      do {
        fd = try system.open(name, [.readOnly, .directory, .nonBlocking])
      } catch {
        throw StoreFileError(.system(error), path: path)
      }
      let directory = StoreDirectory(fd: fd, path: path)
      do {
        try checkOwnership(try status(fd, path: path), path: path)
      } catch {
        close(directory)
        throw error
      }
      return directory
    }
    let parentFD: FileDescriptor
    do {
      parentFD = try system.open(parentPath, [.readOnly, .directory, .nonBlocking])
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
    defer { system.closeIgnoringErrors(parentFD) }
    let opened = try openDirectory(
      name, in: StoreDirectory(fd: parentFD, path: parentPath), creating: creating)
    return StoreDirectory(fd: opened.fd, path: path)
  }

  /// Opens (and, when `creating`, makes) a directory of the store inside `parent`.
  ///
  /// - Parameters:
  ///   - name: Its name in `parent`.
  ///   - parent: An open directory of the store.
  ///   - creating: Whether a missing directory is created with mode 0700.
  /// - Returns: The open directory.
  /// - Throws: ``StoreFileError`` as ``openDirectory(atPath:creating:)``.
  public func openDirectory(_ name: String, in parent: StoreDirectory, creating: Bool)
    throws(StoreFileError) -> StoreDirectory
  {
    let path = parent.path(of: name)
    var created = false
    let fd: FileDescriptor
    do {
      do {
        fd = try system.openat(parent.fd, name, [.readOnly, .directory, .nonBlocking])
      } catch  where error == .noSuchFileOrDirectory && creating {
        do {
          try system.mkdirat(parent.fd, name, mode: 0o700)
          created = true
        } catch  where error == .fileExists {}
        fd = try system.openat(parent.fd, name, [.readOnly, .directory, .nonBlocking])
      }
    } catch  where error == .notDirectory || error == .tooManySymbolicLinks {
      throw wrongType(name, in: parent, expectingDirectory: true, errno: error)
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
    let directory = StoreDirectory(fd: fd, path: path)
    do throws(StoreFileError) {
      if created {
        do { try system.fchmod(fd, mode: 0o700) } catch {
          throw StoreFileError(.system(error), path: path)
        }
      }
      try checkOwnership(try status(fd, path: path), path: path)
    } catch {
      close(directory)
      throw error
    }
    return directory
  }

  /// Opens a file of the store inside `parent` without waiting and checks it on the descriptor.
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
  /// write, is still refused (`insecure`).
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
    do {
      return try openFile(name, in: parent, flags)
    } catch  where error.isWrongType || error.isHardLinked {
      try removeEntry(name, in: parent)
      return try openFile(name, in: parent, flags.union([.create, .exclusive]))
    }
  }

  /// Creates a new private file with `O_CREAT | O_EXCL` (mode 0600), after removing whatever
  /// stands under that name (a leftover temporary file, or anything else: only call it for names
  /// that hold nothing but temporary files).
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
    do {
      return try system.openat(
        parent.fd, name, [.writeOnly, .create, .exclusive, .nonBlocking], mode: 0o600)
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
  }

  /// Removes whatever stands under `name` (a file, a link, a FIFO, or a directory tree up to
  /// ``maximumRemovalDepth`` levels deep); a missing name is not an error. Links are removed,
  /// never followed. Only the online path calls this.
  ///
  /// - Parameters:
  ///   - name: The name in `parent`.
  ///   - parent: An open directory of the store.
  /// - Throws: ``StoreFileError``.
  /// - Complexity: O(entries in the tree).
  public func removeEntry(_ name: String, in parent: StoreDirectory) throws(StoreFileError) {
    try removeEntry(name, in: parent, depth: 0)
  }

  private func removeEntry(_ name: String, in parent: StoreDirectory, depth: Int)
    throws(StoreFileError)
  {
    let path = parent.path(of: name)
    let info: FileStatus
    do {
      info = try system.fstatat(parent.fd, name)
    } catch  where error == .noSuchFileOrDirectory {
      return
    } catch {
      throw StoreFileError(.system(error), path: path)
    }
    do {
      guard info.kind == .directory else {
        try system.unlinkat(parent.fd, name)
        return
      }
      guard depth < Self.maximumRemovalDepth else {
        throw StoreFileError(.system(.invalidArgument), path: path)
      }
      let fd = try system.openat(parent.fd, name, [.readOnly, .directory, .nonBlocking])
      let directory = StoreDirectory(fd: fd, path: path)
      defer { close(directory) }
      let names: [String]
      do { names = try system.directoryEntries(fd) } catch {
        throw StoreFileError(.system(error), path: path)
      }
      for entry in names { try removeEntry(entry, in: directory, depth: depth + 1) }
      try system.removeDirectoryAt(parent.fd, name)
    } catch let error as StoreFileError {
      throw error
    } catch let error as Errno {
      throw StoreFileError(.system(error), path: path)
    } catch {
      throw StoreFileError(.system(.ioError), path: path)
    }
  }

  /// Refuses, before an online path writes anything, a directory of the store that it could not
  /// repair: when a directory stands under `name` (never followed), it must be owned by the
  /// effective user and not writable by group or others. A missing name, or anything else under
  /// it (a file, a FIFO, a link: the online path replaces it), passes; so nothing is read, and
  /// nothing waits.
  ///
  /// - Parameters:
  ///   - name: The directory's name in `parent` (`items`, `tmp`).
  ///   - parent: An open directory of the store.
  /// - Throws: ``StoreFileError/Problem/insecure(ownerID:permissions:effectiveUserID:)`` naming
  ///   the path, or a `system` error of `fstatat` other than `ENOENT`.
  /// - Complexity: O(1): one `fstatat`.
  public func refuseInsecureDirectory(_ name: String, in parent: StoreDirectory)
    throws(StoreFileError)
  {
    let info: FileStatus
    do {
      info = try system.fstatat(parent.fd, name)
    } catch  where error == .noSuchFileOrDirectory {
      return
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
    guard info.kind == .directory else { return }
    try checkOwnership(info, path: parent.path(of: name))
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
  private func wrongType(
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
