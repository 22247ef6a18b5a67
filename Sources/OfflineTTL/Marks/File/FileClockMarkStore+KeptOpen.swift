import Synchronization

/// Whether a ``FileClockMarkStore`` value keeps descriptors open between operations, and the
/// descriptors it keeps (`KeptMarkHandles`). Shared by every copy of one store value.
typealias KeptMarkFiles = KeptStoreFiles<KeptMarkHandles>

/// The descriptors a long-lived ``FileClockMarkStore`` keeps open: the store directory, the
/// record (read-write where it can be opened so) and lock-file descriptors, with the identity
/// (device, inode) each had when it was opened and checked. Closed when the last reference goes
/// away, so an operation that still uses them is never left with a closed descriptor.
///
/// Every operation that locks takes a lock descriptor of its own from `idleLocks` (opening one
/// when none is idle) and gives it back afterwards: `flock` locks belong to an open file
/// description, so threads sharing one store value exclude each other only through separate
/// ones.
final class KeptMarkHandles: Sendable {
  let directory: StoreDirectory
  let directoryStatus: FileStatus
  let record: FileDescriptor
  let recordStatus: FileStatus
  /// Whether `record` was opened read-write (else the writing observation takes the full path).
  let recordWritable: Bool
  let lockStatus: FileStatus
  /// Lock-file descriptors no operation is using, each its own open file description, none
  /// holding a lock.
  let idleLocks: Mutex<[FileDescriptor]>
  let system: Syscalls

  /// How many idle lock descriptors are kept at most; more are closed when given back.
  static let maximumIdleLocks = 16

  init(
    directory: StoreDirectory, directoryStatus: FileStatus, record: FileDescriptor,
    recordStatus: FileStatus, recordWritable: Bool, lock: FileDescriptor, lockStatus: FileStatus,
    system: Syscalls
  ) {
    self.directory = directory
    self.directoryStatus = directoryStatus
    self.record = record
    self.recordStatus = recordStatus
    self.recordWritable = recordWritable
    self.lockStatus = lockStatus
    self.idleLocks = Mutex([lock])
    self.system = system
  }

  deinit {
    for lock in idleLocks.withLock({ $0 }) { system.closeIgnoringErrors(lock) }
    system.closeIgnoringErrors(record)
    system.closeIgnoringErrors(directory.fd)
  }

  /// A lock descriptor for one operation: an idle one, or a new one opened in the kept directory
  /// (`nil` when the lock file there is no longer the kept one, or cannot be opened).
  func takeLock() -> FileDescriptor? {
    if let idle = idleLocks.withLock({ $0.popLast() }) { return idle }
    guard
      let opened = try? SecureStoreFiles(system: system).openFile(
        FileClockMarkStore.lockFileName, in: directory, .readOnly)
    else { return nil }
    guard opened.status.isSameFile(as: lockStatus) else {
      system.closeIgnoringErrors(opened.fd)
      return nil
    }
    return opened.fd
  }

  /// Gives back a lock descriptor that holds no lock.
  func giveBack(_ lock: FileDescriptor) {
    let kept = idleLocks.withLock { idle in
      guard idle.count < Self.maximumIdleLocks else { return false }
      idle.append(lock)
      return true
    }
    if !kept { system.closeIgnoringErrors(lock) }
  }

  /// Releases `lock`'s `flock` and gives it back; closes it instead when the release fails
  /// (closing the last descriptor of an open file description releases its lock).
  func unlockAndGiveBack(_ lock: FileDescriptor) {
    do {
      try system.flock(lock, .unlock)
      giveBack(lock)
    } catch {
      system.closeIgnoringErrors(lock)
    }
  }
}

extension KeptMarkHandles: KeptDescriptorSet {
  /// Nothing: the descriptors are closed when the last reference goes away (an operation may
  /// still be using them).
  func close(_ system: Syscalls) {}
}

extension FileStatus {
  /// Whether `SecureStoreFiles.checkOwnership(_:path:)` would accept this file for `user`
  /// (the effective user id, read once by the caller): owned by `user`, writable by nobody
  /// else, and (unless a directory) of one name.
  func isPrivate(to user: UInt32) -> Bool {
    ownerID == user && !isWritableByOthers && !hasOtherNames
  }
}

extension FileClockMarkStore {
  /// The record, read without waiting for the lock, or `nil` when the caller must take the lock
  /// (``observe(resolution:readingClocks:)`` and ``read()`` then do exactly what they did before).
  ///
  /// Only for an unsealed store, and only from its second operation on (the first one opens
  /// nothing beyond the locked path's descriptors). The descriptors stay open between calls
  /// (`KeptMarkHandles`); every call checks, before reading (`checkKept(_:)`):
  /// - `lstat` of the store directory's path: a directory, the one kept open (a directory
  ///   renamed into its place is noticed), owned by this user and writable by nobody else;
  /// - `fstatat` of `clock-mark` and of `clock-mark.lock` in it (never following a link): each
  ///   the regular file kept open (a file renamed over it is noticed), owned by this user;
  ///   the record of mode 0600 (no group or other bit) and of the exact size, the lock file
  ///   writable by nobody else;
  /// then takes `flock(LOCK_SH | LOCK_NB)` on a kept lock descriptor of its own, which never
  /// waits: it fails while a writer holds its exclusive lock, that is from before the writer's
  /// read until after its `fdatasync` (or the rename and directory `fsync` of a reset). Holding
  /// it, no write is in flight and every write that completed is durable, so the newest slot
  /// that passes its checksum is one an acknowledged write left (never a torn or not yet durable
  /// one); it reads the two slots with one `pread`, releases the lock and decodes them as the
  /// locked path does (checksums, sequences, an unknown version). Any check that fails, a writer
  /// holding the lock, or a record that does not decode sends the caller to the locked path,
  /// which reports the problem as before; a replaced file also drops the kept descriptors.
  ///
  /// System calls: `lstat`, 2 `fstatat`, 2 `flock`, 1 `pread`; no open, close, write or sync.
  func keptOpenRecord() -> ClockMarkRecord? {
    guard let files = keptHandles(), let hint = validatedKeptRecord(files) else { return nil }
    return hint.record
  }

  /// As `keptOpenRecord()` through `files`, with the record's sequence
  /// (`RecordHint.isValidated` is `true`).
  func validatedKeptRecord(_ files: KeptMarkHandles) -> RecordHint? {
    switch readKept(files) {
    case .record(let loaded):
      return RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: true)
    case .retry:
      return nil
    case .replaced:
      dropKeptFiles(files)
      return nil
    }
  }

  /// The kept descriptors, opened now when the previous operation completed without them; `nil`
  /// for a sealed store (unless `allowingSealed`: its observation without a write,
  /// `observeSealed`), on the first operation of a store value (which only marks it used),
  /// and when they cannot be opened and checked.
  func keptHandles(allowingSealed: Bool = false) -> KeptMarkHandles? {
    guard sealing == nil || allowingSealed else { return nil }
    return kept.state.withLock { state -> KeptMarkHandles? in
      switch state {
      case .unused:
        state = .used
        return nil
      case .used:
        guard let opened = openKept() else { return nil }
        state = .kept(opened)
        return opened
      case .kept(let files):
        return files
      }
    }
  }

  /// Stops keeping `files` (the next operation opens them again): a file or the directory is
  /// not the one kept open, or fails a check. Descriptors still in use by another operation are
  /// closed when it finishes.
  func dropKeptFiles(_ files: KeptMarkHandles) {
    kept.state.withLock { state in
      if case .kept(let current) = state, current === files { state = .used }
    }
  }

  /// Marks that an operation completed (the next one may keep descriptors open).
  func noteOperation() {
    kept.state.withLock { state in
      if case .unused = state { state = .used }
    }
  }

  /// The record read through the kept descriptor without any lock: a *hint*
  /// (`RecordHint.isValidated` `false`), which may be a slot whose write is not yet durable and
  /// is never the ground of an answer by itself (the group commit of
  /// ``observe(resolution:readingClocks:)`` compares it with the record read under the
  /// exclusive lock). One `pread`.
  func hintRead(_ files: KeptMarkHandles) -> RecordHint? {
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard (try? system.preadAll(files.record, into: &bytes, at: 0)) == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return nil }
    return RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: false)
  }

  enum KeptRead {
    case record(LoadedRecord)
    /// Take the lock this time (a writer holds it, or the record did not decode).
    case retry
    /// A file or the directory is not the one kept open, or fails its checks: close them.
    case replaced
  }

  private func readKept(_ files: KeptMarkHandles) -> KeptRead {
    guard checkKept(files) else { return .replaced }
    guard let lock = files.takeLock() else { return .replaced }
    do {
      try system.flock(lock, LockOperation.shared.nonBlocking)
    } catch {
      files.giveBack(lock)
      return .retry
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count = try? system.preadAll(files.record, into: &bytes, at: 0)
    files.unlockAndGiveBack(lock)
    return decodeKept(bytes, count: count, files)
  }

  /// The record in `bytes` (read through the kept descriptor), decoded and checked as the
  /// locked path does, or `.retry` when it does not decode or is sealed (an unsealed store
  /// refuses a sealed record with `key_required`: the locked path says so).
  func decodeKept(_ bytes: [UInt8], count: Int?, _ files: KeptMarkHandles) -> KeptRead {
    guard count == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return .retry }
    do {
      _ = try checkSeals(bytes, creatingKey: false)
    } catch {
      return .retry
    }
    return .record(loaded)
  }

  /// Whether the kept directory, record and lock file are still the ones under the store's path
  /// and pass the locked path's checks: `lstat` of the path, `fstatat` of the record (without
  /// its times) and of the lock file.
  func checkKept(_ files: KeptMarkHandles) -> Bool {
    // One `geteuid` for the three checks.
    let user = system.effectiveUserID()
    guard let directory = try? system.lstat(directoryPath),
      directory.kind == .directory, directory.isSameFile(as: files.directoryStatus),
      directory.isPrivate(to: user),
      let record = try? system.fstatatWithoutTimes(files.directory.fd, Self.recordFileName),
      record.kind == .regular, record.isSameFile(as: files.recordStatus),
      record.isPrivate(to: user), !record.isAccessibleByOthers,
      record.size == Int64(MarkRecordCodec.fileSize),
      let lock = try? system.fstatat(files.directory.fd, Self.lockFileName),
      lock.kind == .regular, lock.isSameFile(as: files.lockStatus),
      lock.isPrivate(to: user)
    else { return false }
    return true
  }

  /// Opens and checks the directory, the record (read-write where it may be, for the writing
  /// observation; else read-only) and the lock file to keep them open; `nil` when any is
  /// missing or fails the checks of the locked path.
  private func openKept() -> KeptMarkHandles? {
    guard let directory = try? secure.openDirectory(atPath: directoryPath, creating: false)
    else { return nil }
    guard let directoryStatus = try? system.fstat(directory.fd) else {
      secure.close(directory)
      return nil
    }
    var recordWritable = true
    let opened: FileDescriptor
    if let writable = try? openRecord(in: directory.fd, .readWrite) {
      opened = writable
    } else if let readable = try? openRecord(in: directory.fd, .readOnly) {
      opened = readable
      recordWritable = false
    } else {
      secure.close(directory)
      return nil
    }
    guard let recordStatus = try? system.fstatWithoutTimes(opened),
      recordStatus.kind == .regular,
      let lock = try? secure.openFile(Self.lockFileName, in: directory, .readOnly)
    else {
      system.closeIgnoringErrors(opened)
      secure.close(directory)
      return nil
    }
    return KeptMarkHandles(
      directory: directory, directoryStatus: directoryStatus, record: opened,
      recordStatus: recordStatus, recordWritable: recordWritable, lock: lock.fd,
      lockStatus: lock.status, system: system)
  }
}
