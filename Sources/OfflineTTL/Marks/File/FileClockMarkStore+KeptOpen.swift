import Synchronization

/// The descriptors a long-lived ``FileClockMarkStore`` keeps open for its repeated reads: the
/// store directory, the record and the lock file, with the identity (device, inode) each had
/// when it was opened and checked. Shared by every copy of one store value; closed when the last
/// copy goes away.
final class KeptMarkFiles: Sendable {
  struct Kept: Sendable {
    let directory: StoreDirectory
    let directoryStatus: FileStatus
    let record: FileDescriptor
    let recordStatus: FileStatus
    let lock: FileDescriptor
    let lockStatus: FileStatus
  }

  enum State: Sendable {
    /// No operation has completed yet: the first one takes the lock and opens nothing extra.
    case unused
    /// An operation completed; the next read opens and keeps the descriptors.
    case used
    case kept(Kept)
  }

  let state = Mutex<State>(.unused)
  let system: Syscalls

  init(system: Syscalls) {
    self.system = system
  }

  deinit {
    state.withLock { state in
      if case .kept(let kept) = state { Self.close(kept, system) }
    }
  }

  static func close(_ kept: Kept, _ system: Syscalls) {
    system.closeIgnoringErrors(kept.record)
    system.closeIgnoringErrors(kept.lock)
    system.closeIgnoringErrors(kept.directory.fd)
  }
}

extension FileStatus {
  /// Whether `other` names the same file (device and inode).
  func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }
}

extension FileClockMarkStore {
  /// The record, read without waiting for the lock, or `nil` when the caller must take the lock
  /// (``observe(resolution:readingClocks:)`` and ``read()`` then do exactly what they did before).
  ///
  /// Only for an unsealed store, and only from its second operation on (the first one opens
  /// nothing beyond the locked path's descriptors). The descriptors stay open between calls;
  /// every call checks, before reading:
  /// - `lstat` of the store directory's path: a directory, the one kept open (a directory
  ///   renamed into its place is noticed), owned by this user and writable by nobody else;
  /// - `fstatat` of `clock-mark` and of `clock-mark.lock` in it (never following a link): each
  ///   the regular file kept open (a file renamed over it is noticed), owned by this user;
  ///   the record of mode 0600 (no group or other bit) and of the exact size, the lock file
  ///   writable by nobody else;
  /// then takes `flock(LOCK_SH | LOCK_NB)` on the kept lock descriptor, which never waits: it
  /// fails while a writer holds its exclusive lock, that is from before the writer's read until
  /// after its `fdatasync` (or the rename and directory `fsync` of a reset). Holding it, no write
  /// is in flight and every write that completed is durable, so the newest slot that passes its
  /// checksum is one an acknowledged write left (never a torn or not yet durable one); it reads
  /// the two slots with one `pread`, releases the lock and decodes them as the locked path does
  /// (checksums, sequences, an unknown version). Any check that fails, a writer holding the lock,
  /// or a record that does not decode sends the caller to the locked path, which reports the
  /// problem as before; a replaced file also drops the kept descriptors.
  ///
  /// System calls: `lstat`, 2 `fstatat`, 2 `flock`, 1 `pread`; no open, close, write or sync.
  func keptOpenRecord() -> ClockMarkRecord? {
    guard let hint = recordBeforeLock(validating: true), hint.isValidated else { return nil }
    return hint.record
  }

  /// The record read before the lock is taken, through the kept descriptors, or `nil` (the
  /// caller takes the lock and reads it there, as before).
  ///
  /// With `validating`, as `keptOpenRecord()` (every check, the non-blocking shared lock).
  /// Without it, only `flock(LOCK_SH | LOCK_NB)` and its release, to learn whether a writer holds
  /// the lock: when none does, `nil` (an observation that writes alone takes the lock and reads
  /// its clocks under it, as before). While a writer holds the lock (in both cases), the two
  /// slots are read with one `pread` and no lock: a *hint* (`RecordHint.isValidated`
  /// `false`), which may be a slot whose write is not yet durable and is never the ground of an
  /// answer by itself: the group commit (``observe(resolution:readingClocks:)``) compares it
  /// with the record read under the exclusive lock. Only for an unsealed store, and only from
  /// its second operation on.
  ///
  /// System calls without `validating`: 2 `flock` when no writer holds the lock; 1 `flock` and
  /// 1 `pread` (the hint) while one does (none on the first operation; the second opens the kept
  /// descriptors once).
  func recordBeforeLock(validating: Bool) -> RecordHint? {
    guard sealing == nil else { return nil }
    return kept.state.withLock { state -> RecordHint? in
      switch state {
      case .unused:
        state = .used
        return nil
      case .used:
        guard let opened = openKept() else { return nil }
        state = .kept(opened)
      case .kept: break
      }
      guard case .kept(let files) = state else { return nil }
      if validating {
        switch readKept(files) {
        case .record(let loaded):
          return RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: true)
        case .retry: break
        case .replaced:
          KeptMarkFiles.close(files, system)
          state = .used
          return nil
        }
      } else {
        do {
          try system.flock(files.lock, LockOperation.shared.nonBlocking)
        } catch {
          // A writer holds the lock: this observation may share its write.
          return hintRead(files)
        }
        try? system.flock(files.lock, .unlock)
        return nil
      }
      return hintRead(files)
    }
  }

  /// Closes the kept descriptors (the next operation opens them again): the record read under
  /// the lock is older than the kept one's, so the kept file is no longer the record.
  func dropKeptFiles() {
    kept.state.withLock { state in
      if case .kept(let files) = state {
        KeptMarkFiles.close(files, system)
        state = .used
      }
    }
  }

  private func hintRead(_ files: KeptMarkFiles.Kept) -> RecordHint? {
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard (try? system.preadAll(files.record, into: &bytes, at: 0)) == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return nil }
    return RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: false)
  }

  /// Marks that an operation completed (the next read may keep descriptors open).
  func noteOperation() {
    kept.state.withLock { state in
      if case .unused = state { state = .used }
    }
  }

  private enum KeptRead {
    case record(LoadedRecord)
    /// Take the lock this time (a writer holds it, or the record did not decode).
    case retry
    /// A file or the directory is not the one kept open, or fails its checks: close them.
    case replaced
  }

  private func readKept(_ files: KeptMarkFiles.Kept) -> KeptRead {
    guard let directory = try? system.lstat(directoryPath),
      directory.kind == .directory, directory.isSameFile(as: files.directoryStatus),
      isSecure(directory, path: directoryPath),
      let record = try? system.fstatatWithoutTimes(files.directory.fd, Self.recordFileName),
      record.kind == .regular, record.isSameFile(as: files.recordStatus),
      isSecure(record, path: directoryPath), !record.isAccessibleByOthers,
      record.size == Int64(MarkRecordCodec.fileSize),
      let lock = try? system.fstatat(files.directory.fd, Self.lockFileName),
      lock.kind == .regular, lock.isSameFile(as: files.lockStatus),
      isSecure(lock, path: directoryPath)
    else { return .replaced }
    do {
      try system.flock(files.lock, LockOperation.shared.nonBlocking)
    } catch {
      return .retry
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count = try? system.preadAll(files.record, into: &bytes, at: 0)
    try? system.flock(files.lock, .unlock)
    guard count == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return .retry }
    do {
      // An unsealed store refuses a sealed record (key_required): the locked path says so.
      _ = try checkSeals(bytes, creatingKey: false)
    } catch {
      return .retry
    }
    return .record(loaded)
  }

  private func isSecure(_ status: FileStatus, path: String) -> Bool {
    (try? secure.checkOwnership(status, path: path)) != nil
  }

  /// Opens and checks the directory, the record and the lock file to keep them open; `nil`
  /// when any is missing or fails the checks of the locked path.
  private func openKept() -> KeptMarkFiles.Kept? {
    guard let directory = try? secure.openDirectory(atPath: directoryPath, creating: false)
    else { return nil }
    guard let directoryStatus = try? system.fstat(directory.fd),
      let record = try? openRecord(in: directory.fd, .readOnly)
    else {
      secure.close(directory)
      return nil
    }
    guard let recordStatus = try? system.fstatWithoutTimes(record), recordStatus.kind == .regular,
      let lock = try? secure.openFile(Self.lockFileName, in: directory, .readOnly)
    else {
      system.closeIgnoringErrors(record)
      secure.close(directory)
      return nil
    }
    return KeptMarkFiles.Kept(
      directory: directory, directoryStatus: directoryStatus, record: record,
      recordStatus: recordStatus, lock: lock.fd, lockStatus: lock.status)
  }
}
