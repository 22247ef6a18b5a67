/// A record loaded under the lock: its descriptor (left open for the write that may follow), the
/// file's bytes, and which slot holds the newest valid copy.
struct LoadedRecord {
  let fd: FileDescriptor
  let bytes: [UInt8]
  let newestSlot: Int
  let sequence: UInt64
  let record: ClockMarkRecord
  /// The seal of a sealed store (its subkeys and store id); `nil` when the store is not sealed.
  var seal: MarkSeal.Context? = nil
  /// Whether the record file has another name (a hard link), another owner, or a mode that
  /// lets group or others read or write it: loaded only for an online reset, which then
  /// replaces the file (a new file of its own, 0600) instead of writing its slots in place.
  var mustBeReplaced = false
}

extension FileClockMarkStore {
  /// Opens the store directory and the lock file, takes the lock, runs `body`, and releases
  /// everything (closing the lock descriptor releases the lock).
  ///
  /// - Parameters:
  ///   - creating: Whether a missing directory or lock file is created (operations that write a
  ///     new record). Otherwise a missing directory, or a missing lock file with no record, is
  ///     `absent` and nothing is created.
  ///   - lock: Shared or exclusive, waited for at most ``lockTimeout``; `nil` takes none (only
  ///     `read()` after its wait ran out: it writes nothing).
  ///   - repairing: Whether a lock file that is not a regular file (a FIFO, a directory, a link),
  ///     that has another name (a hard link) or that this user may not open (mode 0000) is
  ///     removed and created again, and the store directory gets its owner's bits back (a
  ///     directory of this user left at 0000 or 0500 by a umask): only the online sign-in's
  ///     reset does this.
  func withLockedDirectory<R>(
    creating: Bool, repairing: Bool = false, lock: LockOperation?,
    _ body: (FileDescriptor) throws(StoreError) -> R
  ) throws(StoreError) -> R {
    let directory = try openDirectory(creating: creating, repairing: repairing)
    defer { system.closeIgnoringErrors(directory.fd) }
    let lockFD = try openLockFile(in: directory, creating: creating, repairing: repairing)
    defer { system.closeIgnoringErrors(lockFD) }
    if let lock {
      do {
        try system.flock(lockFD, lock, waitingAtMost: lockTimeout)
      } catch {
        throw lockError(error)
      }
    }
    return try body(directory.fd)
  }

  /// The store error for a lock wait that failed: `lock_timed_out` when another holder kept the
  /// lock past ``lockTimeout``, else `lock_failed`.
  func lockError(_ error: Errno) -> StoreError {
    if error == .timedOut {
      return StoreError(
        code: .lockTimedOut,
        message: "\(Self.lockFileName) in \(directoryPath) stayed locked by another thread or"
          + " process for longer than the lock timeout (\(lockTimeout)); nothing was read or"
          + " written")
    }
    return StoreError(
      code: .lockFailed, errno: error.rawValue,
      message: "cannot lock \(Self.lockFileName) in \(directoryPath): \(error)")
  }

  /// The secure open (non-blocking, never following a link, owner and mode checked on the
  /// descriptor), shared with the cache store.
  var secure: SecureStoreFiles { SecureStoreFiles(system: system) }

  private func openDirectory(creating: Bool, repairing: Bool) throws(StoreError)
    -> StoreDirectory
  {
    do {
      return try secure.openDirectory(
        atPath: directoryPath, creating: creating, repairing: repairing)
    } catch  where error.errno == .noSuchFileOrDirectory && !creating {
      throw StoreError(
        code: .absent, reason: "no clock mark record: \(directoryPath) does not exist")
    } catch  where error.isInsecure {
      throw insecure(error)
    } catch {
      throw StoreError(
        code: .storeUnusable, errno: error.errno?.rawValue,
        reason: "cannot open the store directory: \(error)")
    }
  }

  private func openLockFile(in directory: StoreDirectory, creating: Bool, repairing: Bool)
    throws(StoreError) -> FileDescriptor
  {
    // flock needs no write access: a read-only descriptor lets `read()` work on a read-only
    // mount.
    let flags: OpenFlags = .readOnly
    if repairing {
      do {
        return try secure.openOrReplaceFile(Self.lockFileName, in: directory, flags.union(.create))
          .fd
      } catch {
        throw lockFailed(error)
      }
    }
    do {
      return try secure.openFile(
        Self.lockFileName, in: directory, creating ? flags.union(.create) : flags
      ).fd
    } catch  where error.errno == .noSuchFileOrDirectory && !creating {
      // No lock file: a record never existed here, unless someone removed the lock file.
      do {
        _ = try system.fstatat(directory.fd, Self.recordFileName)
      } catch  where error == .noSuchFileOrDirectory {
        throw StoreError(
          code: .absent, message: "no clock mark record in \(directoryPath)")
      } catch {}
      do {
        return try secure.openFile(Self.lockFileName, in: directory, flags.union(.create)).fd
      } catch {
        throw lockFailed(error)
      }
    } catch {
      throw lockFailed(error)
    }
  }

  /// Removes a FIFO, directory or link standing where the record belongs (online reset only),
  /// so the new record can be renamed into place. Errors are left to the rename to report.
  func removeNonRecord(in directory: FileDescriptor) {
    guard let status = try? system.fstatat(directory, Self.recordFileName),
      status.kind != .regular
    else { return }
    try? secure.removeEntry(
      Self.recordFileName, in: StoreDirectory(fd: directory, path: directoryPath))
  }

  /// Opens, checks and reads the record under the lock.
  ///
  /// - Parameters:
  ///   - writable: Open read-write (for a write that may follow).
  ///   - creatingKey: Whether a sealed store may create a missing key (online sign-in only).
  ///   - acceptingOtherNames: Whether a record with another name (a hard link), another owner
  ///     or an insecure mode is loaded, with ``LoadedRecord/mustBeReplaced`` set, instead of
  ///     refused as `insecure_store`: only for the online reset, which reads it for its
  ///     generation, then replaces the file and never writes through it.
  /// - Returns: The loaded record; the caller closes its descriptor.
  /// - Throws: `absent`, `unreadable` with its reason, `writeFailed` when a writable open is
  ///   refused by a read-only file system, or refused (`EPERM`, `EACCES`) for a record that can
  ///   still be opened for reading (an immutable file), or a seal failure (`key_required`,
  ///   `seal_mismatch`, `mark_unauthentic`, `key_unavailable`).
  func load(
    in directory: FileDescriptor, writable: Bool, creatingKey: Bool = false,
    acceptingOtherNames: Bool = false
  ) throws(StoreError) -> LoadedRecord {
    let fd: FileDescriptor
    do {
      fd = try openRecord(in: directory, writable ? .readWrite : .readOnly)
    } catch {
      if writable, error == .permissionDenied || error == .notPermitted,
        let readable = try? system.openat(
          directory, Self.recordFileName, [.readOnly, .nonBlocking])
      {
        // The record can be read, only not opened for writing (an immutable or read-only file):
        // the mark cannot be persisted, but it is not unreadable.
        system.closeIgnoringErrors(readable)
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message:
            "\(Self.recordFileName) in \(directoryPath) can be read but not opened for writing"
            + " (immutable or read-only?): \(error)")
      }
      throw openError(error, writable: writable, in: directory)
    }
    do {
      var loaded = try loadOpened(fd, acceptingOtherNames: acceptingOtherNames)
      loaded.seal = try checkSeals(loaded.bytes, creatingKey: creatingKey)
      return loaded
    } catch {
      system.closeIgnoringErrors(fd)
      throw error
    }
  }

  /// Opens the record (non-blocking, never following a link) with `O_NOATIME`, so that reading
  /// it does not change its access time (an inode change the next `fdatasync` would write);
  /// where that is refused (`EPERM`: the caller does not own the file), opens it again without,
  /// so that the checks after the open report the file's real problem as before.
  func openRecord(in directory: FileDescriptor, _ access: OpenFlags) throws(Errno)
    -> FileDescriptor
  {
    do {
      return try system.openat(
        directory, Self.recordFileName, [access, .nonBlocking, .noAccessTime])
    } catch  where error == .notPermitted {
      return try system.openat(directory, Self.recordFileName, [access, .nonBlocking])
    }
  }

  private func loadOpened(_ fd: FileDescriptor, acceptingOtherNames: Bool = false)
    throws(StoreError) -> LoadedRecord
  {
    let status: FileStatus
    do {
      // Without the times: asking for them makes the next write take fresh fine-grained times,
      // and the inode change costs the write's fdatasync an extra block (`fstatWithoutTimes`).
      status = try system.fstatWithoutTimes(fd)
    } catch {
      throw unreadable(.io, errno: error, "cannot fstat the record")
    }
    guard status.kind == .regular else {
      throw unreadable(.notRegularFile, "the record is \(status.kind.phrase), not a regular file")
    }
    var mustBeReplaced = false
    do {
      // Any access of group or others, read or write, is the same problem (`insecure_store`):
      // the record is this user's evidence, created 0600.
      try secure.checkPrivate(
        status, path: StoreDirectory(fd: fd, path: directoryPath).path(of: Self.recordFileName))
    } catch  where error.isInsecure && acceptingOtherNames {
      // Read for the reset's generation only; the reset renames a new file over the name.
      mustBeReplaced = true
    } catch {
      throw insecure(error, isRecord: true)
    }
    guard status.size != 0 else { throw unreadable(.empty, "the record file is empty") }
    guard status.size <= Int64(MarkRecordCodec.fileSize) else {
      throw unreadable(
        .oversized,
        "the record file has \(status.size) bytes, more than \(MarkRecordCodec.fileSize)")
    }
    guard status.size == Int64(MarkRecordCodec.fileSize) else {
      throw unreadable(
        .truncated,
        "the record file has \(status.size) bytes, fewer than \(MarkRecordCodec.fileSize)")
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count: Int
    do throws(Errno) {
      count = try system.preadAll(fd, into: &bytes, at: 0)
    } catch {
      throw unreadable(.io, errno: error, "cannot read the record")
    }
    guard count == MarkRecordCodec.fileSize else {
      throw unreadable(.truncated, "the record file ended after \(count) bytes")
    }
    var loaded = try Self.newest(in: bytes, fd: fd)
    loaded.mustBeReplaced = mustBeReplaced
    return loaded
  }

  static func newest(in bytes: [UInt8], fd: FileDescriptor) throws(StoreError)
    -> LoadedRecord
  {
    var best: LoadedRecord? = nil
    var unknown: UInt16? = nil
    for (index, offset) in MarkRecordCodec.slotOffsets.enumerated() {
      switch MarkRecordCodec.decode(bytes[offset..<(offset + 4096)]) {
      case .valid(let sequence, let record):
        if best == nil || sequence > best!.sequence {
          best = LoadedRecord(
            fd: fd, bytes: bytes, newestSlot: index, sequence: sequence, record: record)
        }
      case .unknownVersion(let version):
        unknown = version
      case .invalid:
        break
      }
    }
    // A slot of an unknown version may be newer than a valid one: never fall back past it.
    if let unknown {
      throw StoreError(
        code: .unreadable, unreadableReason: .unknownVersion,
        message: "the record has format version \(unknown) (or unknown flags); this library reads 1"
      )
    }
    guard let best else {
      throw StoreError(
        code: .unreadable, unreadableReason: .badChecksum,
        message: "no slot of the record passes its checksum")
    }
    return best
  }

  /// The highest generation among version-1 slots whose checksum holds, in a record that could
  /// not be loaded (for ``resetAfterOnlineSignIn(_:)``); `nil` when none can be read. Opened with
  /// the secure open (non-blocking, never following a link, checked on the descriptor): only a
  /// regular file of this user, that nobody else may write, with one name and at most the
  /// record's size, is read.
  func salvagedGeneration(inDirectory directory: FileDescriptor) -> UInt64? {
    guard
      let file = try? secure.openFile(
        Self.recordFileName, in: StoreDirectory(fd: directory, path: directoryPath), .readOnly)
    else { return nil }
    let fd = file.fd
    defer { system.closeIgnoringErrors(fd) }
    guard file.status.size <= Int64(MarkRecordCodec.fileSize) else { return nil }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard let count = try? system.preadAll(fd, into: &bytes, at: 0) else { return nil }
    var highest: UInt64? = nil
    for offset in MarkRecordCodec.slotOffsets where offset + MarkRecordCodec.slotLength <= count {
      if case .valid(_, let record) = MarkRecordCodec.decode(bytes[offset..<(offset + 4096)]) {
        highest = Swift.max(highest ?? 0, record.generation)
      }
    }
    return highest
  }

  // MARK: Errors

  /// The error for a failed open of the record. An open that fails because of what stands
  /// under the name (a socket is `ENXIO`, a directory opened for writing `EISDIR`, a device
  /// without a driver `ENXIO` or `ENODEV`) is `not_regular_file` naming its kind, as a FIFO
  /// or a device that opens is after its `fstat`: one typed reason for every kind of file that
  /// is not a record.
  private func openError(_ error: Errno, writable: Bool, in directory: FileDescriptor)
    -> StoreError
  {
    if error != .noSuchFileOrDirectory && error != .tooManySymbolicLinks,
      let info = try? system.fstatat(directory, Self.recordFileName),
      info.kind != .regular && info.kind != .symbolicLink
    {
      return unreadable(.notRegularFile, "the record is \(info.kind.phrase), not a regular file")
    }
    switch error {
    case .noSuchFileOrDirectory:
      return StoreError(
        code: .absent, message: "no clock mark record in \(directoryPath)")
    case .tooManySymbolicLinks:
      return unreadable(.symbolicLink, "the record is a symbolic link (never followed)")
    case .isDirectory:
      return unreadable(.notRegularFile, "a directory stands where the record should be")
    case .permissionDenied, .notPermitted:
      return unreadable(.permission, errno: error, "the record cannot be opened")
    case .readOnlyFileSystem where writable:
      return StoreError(
        code: .writeFailed, errno: error.rawValue,
        message: "the record cannot be opened for writing: \(error)")
    default:
      return unreadable(.io, errno: error, "the record cannot be opened")
    }
  }

  func unreadable(
    _ why: StoreError.UnreadableReason, errno: Errno? = nil, _ text: String
  ) -> StoreError {
    var reason = "\(Self.recordFileName) in \(directoryPath): \(text)"
    if let errno { reason += ": \(errno)" }
    return StoreError(
      code: .unreadable, unreadableReason: why, errno: errno?.rawValue, message: reason)
  }

  func unusable(_ error: Errno, _ text: String) -> StoreError {
    StoreError(
      code: .storeUnusable, errno: error.rawValue, message: "\(text) \(directoryPath): \(error)")
  }

  private func lockFailed(_ error: StoreFileError) -> StoreError {
    if error.isInsecure { return insecure(error) }
    return StoreError(
      code: .lockFailed, errno: error.errno?.rawValue,
      reason: "cannot open \(Self.lockFileName) in \(directoryPath): \(error)")
  }

  /// The `insecure_store` error for an owner, a mode or a second name, with what to do.
  ///
  /// - Parameters:
  ///   - error: The check's error.
  ///   - isRecord: Whether it is about the record itself, which an online sign-in replaces.
  func insecure(_ error: StoreFileError, isRecord: Bool = false) -> StoreError {
    if error.isHardLinked {
      return StoreError(
        code: .insecureStore, reason: error.description + StoreFileError.hardLinkAdvice)
    }
    if isRecord {
      return StoreError(
        code: .insecureStore,
        reason: "\(error); the record must be this user's with mode 0600: sign in online (the"
          + " sign-in writes a new record of its own), or check it and chmod 600 it (chown it"
          + " back first if another user owns it)")
    }
    return StoreError(
      code: .insecureStore,
      reason: "\(error)" + DirectoryCacheStore.insecureAdvice(for: error))
  }
}
