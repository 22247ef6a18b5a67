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
  /// The change watch of the store directory (``SharedStoreWatch``, shared with the item store
  /// of the same directory), to which the record and the lock file were added; `nil` where none
  /// can be relied on.
  let watch: SharedStoreWatch?
  /// The record the last full check read (`validatedKeptRecord(_:)`). Every read through the
  /// watch runs under this lock.
  let watched: Mutex<WatchedMarkRecord>
  /// Lock-file descriptors no operation is using, each its own open file description, none
  /// holding a lock.
  let idleLocks: Mutex<[FileDescriptor]>
  /// The record as the last writing observation through these descriptors left it, while the
  /// change watch says nothing changed since (`FileClockMarkStore.observeKept`).
  let writerCopy: Mutex<WriterCopy?>
  /// The watch descriptors of the record and of the store directory in `watch`, which tell the
  /// writer's own write from other changes; `nil` without a watch.
  let writtenRecord: StoreChangeWatch.WrittenFile?
  let system: Syscalls

  /// How many idle lock descriptors are kept at most; more are closed when given back.
  static let maximumIdleLocks = 16

  init(
    directory: StoreDirectory, directoryStatus: FileStatus, record: FileDescriptor,
    recordStatus: FileStatus, recordWritable: Bool, lock: FileDescriptor, lockStatus: FileStatus,
    watch: SharedStoreWatch?, system: Syscalls
  ) {
    self.watch = watch
    self.watched = Mutex(WatchedMarkRecord())
    self.writerCopy = Mutex(nil)
    if let watch,
      let file = watch.watch.watchDescriptor(system, of: record),
      let directory = watch.watch.watchDescriptor(system, of: directory.fd)
    {
      self.writtenRecord = StoreChangeWatch.WrittenFile(
        file: file, directory: directory, name: Array(FileClockMarkStore.recordFileName.utf8))
    } else {
      self.writtenRecord = nil
    }
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

/// The record a writing observation through a kept mark store's descriptors left, under the
/// exclusive lock (`FileClockMarkStore.observeKept`): what it wrote, or what it read and did not
/// need to change.
struct WriterCopy: Sendable {
  /// The record file as the observation left it (both slots, as `pread` would return them).
  let loaded: LoadedRecord
  /// The change watch's drain count (``SharedStoreWatch/State/changes``) as of which the files
  /// hold exactly this: from a `poll` made under the lock before the record was read, or from
  /// the drain of the observation's own write.
  let changes: UInt64
  /// The effective user the files were checked for.
  let user: UInt32
}

/// The record a kept mark store's last full check read.
struct WatchedMarkRecord: Sendable {
  /// The record the last full check read under the non-blocking shared lock, the effective
  /// user it was checked for, and the watch's drain count (``SharedStoreWatch/State/changes``)
  /// of a `poll` made before that read; reused, without a lock, while a `poll` gives the same
  /// count.
  var validated: (record: RecordHint, user: UInt32, changes: UInt64)? = nil
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
  ///
  /// **With a change watch** (``StoreChangeWatch``: a store on a local file system), set up
  /// when the descriptors are opened, before their first check, watching the directory, the
  /// record and the lock file: when nothing changed since the last check above read a record,
  /// that record is returned again, without any lock, after one `lstat` of the directory path
  /// (still the directory kept open), the same effective user, and one read of the watch that
  /// finds no event. This is correct without the lock because of what the reused record is and
  /// what the kernel reports:
  /// - it was read under `flock(LOCK_SH | LOCK_NB)` after every check above, so no write was in
  ///   flight then and it is durable (a writer holds the exclusive lock until its `fdatasync`
  ///   returned);
  /// - the watch was drained *before* that read, and the kernel queues an event during the
  ///   system call that changes a watched file (a `pwrite` of the record, a rename over it, a
  ///   change of owner, mode or links), before the writer's `fdatasync` and so before any
  ///   writer acknowledges anything. No event now means no such call completed since the
  ///   drain: the record on disk and in the page cache is still the one reused, and every
  ///   acknowledged write (a sign-in's reset included) is in it.
  /// - A writer that holds the lock but has not written yet (or is inside its `pwrite`) has
  ///   changed nothing a reader could rely on: the reused record is what a read before its
  ///   write finds, and that write is not acknowledged yet. The clocks are read after this
  ///   read, so a mark read here is never compared with an older clock.
  /// Any event drains the watch and takes the checks above (with the shared lock); a writer
  /// holding the lock then sends the caller to the locked path as before. System calls: one
  /// `lstat` (none while the watch also watches the directories above the store, ``PathWatch``),
  /// one `geteuid`, one `poll` of the watch; no lock, no `pread`. The watch is the store
  /// directory's ``SharedStoreWatch``, shared with the item store over the same directory (so
  /// "no event" is "the drain count is the one the reused record was tagged with"); inside the
  /// gate's check (``StoreCheckScope``) the store that reads first makes these three calls for
  /// both stores, and the mark store, reading second, makes none.
  func keptOpenRecord() -> ClockMarkRecord? {
    guard let files = keptHandles(), let hint = validatedKeptRecord(files) else { return nil }
    return hint.record
  }

  /// As `keptOpenRecord()` through `files`, with the record's sequence
  /// (`RecordHint.isValidated` is `true`).
  func validatedKeptRecord(_ files: KeptMarkHandles) -> RecordHint? {
    files.watched.withLock { watched -> RecordHint? in
      // Polled (and so drained) before any full check below: a change after it is an event at
      // the next poll. Inside the gate's check, the item store's poll of the same watch.
      guard let shared = files.watch, let view = shared.view(system) else {
        watched.validated = nil
        return fullyCheckedRecord(files)
      }
      if view.isKeptDirectory, let validated = watched.validated,
        validated.changes == view.changes, validated.user == view.user
      {
        return validated.record
      }
      watched.validated = nil
      shared.forgetView()
      let record = fullyCheckedRecord(files)
      if let record {
        watched.validated = (record, system.effectiveUserID(), view.changes)
      }
      return record
    }
  }

  /// The record read through `files` after every check (`readKept(_:)`).
  private func fullyCheckedRecord(_ files: KeptMarkHandles) -> RecordHint? {
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
      if let seal = try checkSeals(bytes, creatingKey: false) {
        // A sealed store's kept read (`observeSealed`): which key verified it, for which store.
        sealedMemo.remember(
          loaded.record, sequence: loaded.sequence, keys: seal.keys, storeID: seal.storeID)
      }
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
    // Set up before the first full check of what it watches.
    let watch = SharedStoreWatch.join(
      system, path: DirectoryCacheStore.unfollowedPath(directoryPath), directory: directory.fd,
      status: directoryStatus, watching: [opened, lock.fd])
    return KeptMarkHandles(
      directory: directory, directoryStatus: directoryStatus, record: opened,
      recordStatus: recordStatus, recordWritable: recordWritable, lock: lock.fd,
      lockStatus: lock.status, watch: watch, system: system)
  }
}
