import Synchronization

/// The descriptors a long-lived ``FileClockMarkStore`` keeps open for its repeated reads.
typealias KeptMarkFiles = KeptStoreFiles<KeptMarkDescriptors>

/// The store directory, the record and the lock file, with the identity (device, inode) each
/// had when it was opened and checked; and, where the store is on a local file system, a
/// change watch and the record the last full check read.
struct KeptMarkDescriptors: KeptDescriptorSet {
  let directory: StoreDirectory
  let directoryStatus: FileStatus
  let record: FileDescriptor
  let recordStatus: FileStatus
  let lock: FileDescriptor
  let lockStatus: FileStatus
  /// The watch of the directory, the record and the lock file, or `nil`.
  var watch: StoreChangeWatch? = nil
  /// The record the last full check read under the non-blocking shared lock, and the effective
  /// user it was checked for; reused while the watch reports nothing. `nil` without a watch.
  var validated: (record: RecordHint, user: UInt32)? = nil

  func close(_ system: Syscalls) {
    watch?.close(system)
    system.closeIgnoringErrors(record)
    system.closeIgnoringErrors(lock)
    system.closeIgnoringErrors(directory.fd)
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
  ///
  /// **With a change watch** (``StoreChangeWatch``: a store on a local file system), set up
  /// when the descriptors are opened, before their first check, watching the directory, the
  /// record and the lock file: a call first reads the watch once, without waiting. When nothing
  /// changed since the last check above read a record, that record is returned again after one
  /// `lstat` of the directory path (still the directory kept open) and the same effective user;
  /// the watch is read under `flock(LOCK_SH | LOCK_NB)`, like the `pread` above (no writer
  /// holds the lock now, so none is in flight). The record is durable: it was read under the
  /// shared lock, when no write was in flight, and no write reached the record since (a write
  /// is an event at the time of the write, before its `fdatasync`). Any event drains the watch
  /// and takes the checks above. System calls: one `read`, one `lstat`, one `geteuid`, 2
  /// `flock`.
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
      guard case .kept(var files) = state else { return nil }
      if validating {
        if let watch = files.watch {
          // Nothing changed since the last full check: its record, without reading it again.
          let poll: StoreChangeWatch.Poll?
          if let validated = files.validated, isKeptDirectory(files),
            system.effectiveUserID() == validated.user
          {
            poll = pollHoldingTheSharedLock(files, watch)
            if poll == .unchanged { return validated.record }
          } else {
            poll = watch.poll(system)  // drained before the full check below
          }
          if poll == .failed {
            watch.close(system)
            files.watch = nil
          }
          files.validated = nil
          state = .kept(files)
        }
        switch readKept(files) {
        case .record(let loaded):
          let hint = RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: true)
          if files.watch != nil {
            files.validated = (hint, system.effectiveUserID())
            state = .kept(files)
          }
          return hint
        case .retry: break
        case .replaced:
          files.close(system)
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
    kept.drop()
  }

  private func hintRead(_ files: KeptMarkDescriptors) -> RecordHint? {
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard (try? system.preadAll(files.record, into: &bytes, at: 0)) == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return nil }
    return RecordHint(record: loaded.record, sequence: loaded.sequence, isValidated: false)
  }

  /// Marks that an operation completed (the next read may keep descriptors open).
  func noteOperation() {
    kept.noteUsed()
  }

  private enum KeptRead {
    case record(LoadedRecord)
    /// Take the lock this time (a writer holds it, or the record did not decode).
    case retry
    /// A file or the directory is not the one kept open, or fails its checks: close them.
    case replaced
  }

  private func readKept(_ files: KeptMarkDescriptors) -> KeptRead {
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

  /// The watch read while holding `flock(LOCK_SH | LOCK_NB)` (released at once), or `nil` when
  /// a writer holds the lock (the read then waits for the lock as before, even when nothing was
  /// written yet). Read under the shared lock, "no event" says what a `pread` under it would:
  /// no write is in flight, and the record is the one the last full check read.
  private func pollHoldingTheSharedLock(
    _ files: KeptMarkDescriptors, _ watch: StoreChangeWatch
  ) -> StoreChangeWatch.Poll? {
    do {
      try system.flock(files.lock, LockOperation.shared.nonBlocking)
    } catch {
      return nil
    }
    let poll = watch.poll(system)
    try? system.flock(files.lock, .unlock)
    return poll
  }

  /// Whether the directory path still names the directory kept open (one `lstat`).
  private func isKeptDirectory(_ files: KeptMarkDescriptors) -> Bool {
    guard let directory = try? system.lstat(directoryPath) else { return false }
    return directory.kind == .directory && directory.isSameFile(as: files.directoryStatus)
  }

  private func isSecure(_ status: FileStatus, path: String) -> Bool {
    (try? secure.checkOwnership(status, path: path)) != nil
  }

  /// Opens and checks the directory, the record and the lock file to keep them open; `nil`
  /// when any is missing or fails the checks of the locked path.
  private func openKept() -> KeptMarkDescriptors? {
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
    // Set up before the first full check of what it watches (see `keptOpenRecord()`).
    let watch = StoreChangeWatch.open(system, watching: [directory.fd, record, lock.fd])
    return KeptMarkDescriptors(
      directory: directory, directoryStatus: directoryStatus, record: record,
      recordStatus: recordStatus, lock: lock.fd, lockStatus: lock.status, watch: watch)
  }
}
