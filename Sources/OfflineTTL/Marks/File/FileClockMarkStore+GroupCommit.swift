import Synchronization

/// The record a ``FileClockMarkStore`` read before taking the lock
/// (`FileClockMarkStore.validatedKeptRecord(_:)`, `FileClockMarkStore.hintRead(_:)`).
struct RecordHint {
  /// The newest slot that passed its checksum.
  let record: ClockMarkRecord
  /// Its sequence number.
  let sequence: UInt64
  /// Whether it was read under the non-blocking shared lock after every check (no write in
  /// flight: durable), rather than as a hint.
  let isValidated: Bool
}

/// An observation whose clocks were read after a read of the record made before the lock.
struct PendingObservation {
  let hint: RecordHint
  let observation: ClockObservation
  /// `hint.record.observing(observation)`.
  let next: ClockMarkRecord
}

extension FileClockMarkStore {
  /// The first pause of an observation waiting for a covering write, in nanoseconds; each later
  /// pause doubles, up to ``longestCoverPause``.
  static let firstCoverPause: Int64 = 50_000
  /// The longest pause between two polls, in nanoseconds.
  static let longestCoverPause: Int64 = 250_000
  /// How many polls an observation makes before it waits for the exclusive lock (about 100 ms of
  /// pauses: far longer than one write and `fdatasync`).
  static let coverPolls = 400

  /// An observation through the kept descriptors `files` (`keptHandles()`: from the second
  /// operation of an unsealed store value on), with group commit; `nil` when the caller must
  /// take the full locked path (a read-only record, or a check that failed: the full path then
  /// reports the problem as before).
  ///
  /// 1. Takes a kept lock descriptor of its own and tries `flock(LOCK_EX | LOCK_NB)`.
  /// 2. When another writer holds the lock, reads the record first (one `pread`, a hint, unless
  ///    `pending` already holds a validated read) and its clocks after it, then polls
  ///    (`awaitDurableCover(_:lock:for:)`): pauses (50 µs, doubling up to 250 µs), reads the
  ///    *durable* record without waiting for any lock, and returns at once, without locking,
  ///    writing or syncing, when it has a higher sequence than the hint and
  ///    ``ClockMarkRecord/covers(_:)`` this observation's result; else tries the exclusive lock
  ///    without waiting. After 400 polls (about 100 ms) it waits for the exclusive lock, at most
  ///    ``lockTimeout`` (then `lock_timed_out`).
  /// 3. Under the lock, checks that the directory, the record and the lock file are the kept
  ///    ones (`checkKept(_:)`), and reads the record (one `pread`), as the locked path loads it.
  ///    **With a change watch** (``SharedStoreWatch``), it first polls the watch, under the lock
  ///    (`SharedStoreWatch.writerView(_:)`: never a view made before the lock was taken). When
  ///    the poll finds no event since this store's last writing observation left its copy of
  ///    the record (`KeptMarkHandles.writerCopy`), the path still names the kept directory (the
  ///    path watch, else one `lstat`) and the effective user is the same, the copy is the
  ///    record: no check by name and no `pread`. Why that is the record on disk: the copy was
  ///    tagged with the drain count of a `poll` made under the lock before the record was read,
  ///    or with the count after the drain of its own write (one `read` right after its
  ///    `pwrite`, before its `fdatasync`), which found exactly that write's two `IN_MODIFY`
  ///    events and nothing else (`SharedStoreWatch.drainOwnWrite(_:since:of:)`), and every
  ///    change another process or store can make to the record, the lock file or the directory
  ///    (a `pwrite`, a truncation, a rename over either file, a new link, a change of owner or
  ///    mode, the directory moved) queues an event during the system call that makes it,
  ///    before anyone acknowledges it; a writer that holds the lock makes its change before it
  ///    releases it. (What inotify cannot show is named at
  ///    `StoreChangeWatch.drainOnce(_:ownWrite:path:proving:)`.) The model `Models/mark-protocol.pml` checks this (`CACHED_WRITER`; its
  ///    negative twins poll before the lock, or not at all, and undo a sign-in).
  /// 4. If another write since the read before the lock (a higher sequence) left a record that
  ///    covers this observation's result, returns without writing or syncing: the covering
  ///    record was read under the exclusive lock, so its write completed, `fdatasync` included.
  ///    The answer is judged on the record read before and on this observation's own clocks.
  /// 5. Otherwise reads the clocks (again) under the lock, after the record: the latest reading
  ///    covers every observation that read its clocks while waiting. Writes the next slot and
  ///    `fdatasync`s when ``ClockMarkRecord/needsWrite(becoming:resolution:)`` says so, then
  ///    releases the lock.
  ///
  /// Why polling and not waiting in `flock`: `flock` is not fair. A writer that releases the
  /// lock and observes again takes it back before the waiters it woke have run, so a waiter
  /// blocked in `flock` can wait through many writes that already cover it. A poll sees the
  /// covering write as soon as it is durable, whoever holds the lock.
  ///
  /// System calls, a writing observation alone: `flock` (non-blocking, granted), `lstat`,
  /// 2 `fstatat`, `pread`, `pwrite`, `fdatasync`, `flock` (release); with a change watch and
  /// its copy in place: `flock`, `poll`, `geteuid` (and the `lstat` without a path watch),
  /// `pwrite`, one `read` of the watch (the drain of its own write), `fdatasync`, `flock`.
  /// Waiting: 1 `pread` before
  /// the polls; each poll a pause, 1 or 2 `flock` (a non-blocking shared lock, released), 1
  /// `pread`, `lstat`, 2 `fstatat`, and 1 `flock` (the non-blocking exclusive try); covered: no
  /// `pwrite`, no `fdatasync`.
  func observeKept(
    _ files: KeptMarkHandles, resolution: Duration,
    readingClocks clocks: () -> ClockObservation, pending validated: PendingObservation?
  ) throws(StoreError) -> ClockMarkTransition? {
    guard files.recordWritable, let lock = files.takeLock() else {
      dropKeptFiles(files)
      return nil
    }
    var pending = validated
    do {
      try system.flock(lock, LockOperation.exclusive.nonBlocking)
    } catch {
      guard error == .wouldBlock else {
        files.giveBack(lock)
        return nil
      }
      // Another writer holds the lock: read the record, then the clocks, while waiting, so
      // that its write, or the next one, may cover this observation.
      if pending == nil, let hint = hintRead(files) {
        let observation = clocks()
        if hint.record.machineRefusal(for: observation) == nil {
          pending = PendingObservation(
            hint: hint, observation: observation, next: hint.record.observing(observation))
        }
      }
      var locked = false
      if let waiting = pending {
        switch awaitDurableCover(files, lock: lock, for: waiting) {
        case .covered(let record):
          files.giveBack(lock)
          return ClockMarkTransition(
            previous: waiting.hint.record, current: waiting.next, wrote: false,
            observation: waiting.observation, coveringRecord: record)
        case .locked:
          locked = true
        case .notCovered:
          break
        case .failed:
          files.unlockAndGiveBack(lock)
          return nil
        }
      }
      if !locked {
        do {
          try system.flock(lock, .exclusive, waitingAtMost: lockTimeout)
        } catch {
          files.giveBack(lock)
          // A holder past the limit: the locked path would wait as long again.
          if error == .timedOut { throw lockError(error) }
          return nil
        }
      }
    }
    defer { files.unlockAndGiveBack(lock) }
    // A poll of the change watch made now, under the lock (never a view made before it).
    let view = files.watch?.writerView(system)
    let loaded: LoadedRecord
    if let copy = files.writerCopy.withLock({ $0.take() }), let view, view.isKeptDirectory,
      copy.changes == view.changes, copy.user == view.user
    {
      // No event since this store's last write (or locked read) left the files as the copy
      // holds them: no check by name and no `pread`.
      loaded = copy.loaded
    } else {
      guard checkKept(files) else {
        dropKeptFiles(files)
        return nil
      }
      var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
      let count = try? system.preadAll(files.record, into: &bytes, at: 0)
      guard case .record(let read) = decodeKept(bytes, count: count, files) else { return nil }
      loaded = read
    }
    let previous = loaded.record
    if let pending, loaded.sequence > pending.hint.sequence, previous.covers(pending.next) {
      // Another observation wrote at least this much, and it is durable (read under the lock).
      keepWriterCopy(loaded, files, view: view)
      return ClockMarkTransition(
        previous: pending.hint.record, current: pending.next, wrote: false,
        observation: pending.observation, coveringRecord: previous)
    }
    var written: LoadedRecord? = nil
    var drained: UInt64? = nil
    let transition = try advance(
      previous, observation: clocks(), resolution: resolution, sealedStoreID: nil
    ) { next throws(StoreError) in
      written = try writeNextSlot(next, over: loaded) {
        // Right after the `pwrite`, before its `fdatasync`: only what was queued up to this
        // `read` must be the write's own events; a change during the `fdatasync` stays queued
        // for the next `poll`.
        if let view, let own = files.writtenRecord {
          drained = files.watch?.drainOwnWrite(system, since: view, of: own)
        }
      }
    }
    if let written {
      if let view, let changes = drained {
        files.writerCopy.withLock {
          $0 = WriterCopy(loaded: written, changes: changes, user: view.user)
        }
      }
    } else {
      keepWriterCopy(loaded, files, view: view)
    }
    return transition
  }

  /// Keeps `loaded`, read under the exclusive lock after the `poll` of `view` (or the copy that
  /// `view` found unchanged), as the writer's copy, when there is a change watch.
  private func keepWriterCopy(
    _ loaded: LoadedRecord, _ files: KeptMarkHandles, view: SharedStoreWatch.View?
  ) {
    guard let view, files.writtenRecord != nil else { return }
    files.writerCopy.withLock {
      $0 = WriterCopy(loaded: loaded, changes: view.changes, user: view.user)
    }
  }

  /// What `awaitDurableCover(_:lock:for:)` ended with.
  enum CoverWait {
    /// A durable record covers the observation (no lock is held).
    case covered(ClockMarkRecord)
    /// The exclusive lock was granted without waiting, and is held on the descriptor.
    case locked
    /// Every poll found nothing that covers it, and the lock taken (no lock is held).
    case notCovered
    /// A shared lock could not be released: the caller closes the descriptor instead.
    case failed
  }

  /// Polls for a durable record that covers `pending` while another writer holds the lock: up to
  /// ``coverPolls`` times, pauses (``firstCoverPause``, doubling up to ``longestCoverPause``),
  /// looks for it (`durableCover(_:lock:for:)`), and else tries `flock(LOCK_EX | LOCK_NB)`.
  func awaitDurableCover(
    _ files: KeptMarkHandles, lock: FileDescriptor, for pending: PendingObservation
  ) -> CoverWait {
    var pause = Self.firstCoverPause
    for _ in 0..<Self.coverPolls {
      system.pause(nanoseconds: pause)
      pause = min(2 * pause, Self.longestCoverPause)
      switch durableCover(files, lock: lock, for: pending) {
      case .covering(let record): return .covered(record)
      case .notCovering: break
      case .unreleased: return .failed
      }
      do {
        try system.flock(lock, LockOperation.exclusive.nonBlocking)
        return .locked
      } catch {
        guard error == .wouldBlock else { return .notCovered }
      }
    }
    return .notCovered
  }

  /// What one poll of `durableCover(_:lock:for:)` found.
  enum DurableCover {
    /// The durable record, which covers the observation.
    case covering(ClockMarkRecord)
    /// No durable record that covers it (or a check failed).
    case notCovering
    /// The shared lock taken for the read could not be released.
    case unreleased
  }

  /// Whether the durable record, read without waiting for the lock, has a higher sequence than
  /// `pending`'s hint and ``ClockMarkRecord/covers(_:)`` `pending.next`.
  ///
  /// Tries `flock(LOCK_SH | LOCK_NB)` on `lock`, reads the two slots (one `pread`), releases,
  /// then checks that the kept files are still the store's (`checkKept(_:)`: a record renamed
  /// over the kept one before the read is noticed). Which slot is durable:
  /// - with the shared lock, the newest valid slot: no write is in flight, and every write that
  ///   completed returned from its `fdatasync` before its writer released the exclusive lock;
  /// - without it (a writer holds the exclusive lock), the older of the two slots when both are
  ///   valid (`durableSlot(in:)`): the newer one may be the write in flight, but the older was
  ///   written before it, by a writer that held the lock until its `fdatasync` returned. With a
  ///   torn or otherwise invalid slot, none: the valid slot may be a later writer's write in
  ///   flight, read after the torn one was read.
  func durableCover(
    _ files: KeptMarkHandles, lock: FileDescriptor, for pending: PendingObservation
  ) -> DurableCover {
    let idle: Bool
    do {
      try system.flock(lock, LockOperation.shared.nonBlocking)
      idle = true
    } catch {
      idle = false
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count = try? system.preadAll(files.record, into: &bytes, at: 0)
    if idle {
      do { try system.flock(lock, .unlock) } catch { return .unreleased }
    }
    guard count == MarkRecordCodec.fileSize, checkKept(files) else { return .notCovering }
    do {
      // An unsealed store refuses a sealed record (the locked path says so).
      _ = try checkSeals(bytes, creatingKey: false)
    } catch {
      return .notCovering
    }
    let durable: (sequence: UInt64, record: ClockMarkRecord)?
    if idle {
      durable = (try? Self.newest(in: bytes, fd: files.record)).map { ($0.sequence, $0.record) }
    } else {
      durable = Self.durableSlot(in: bytes)
    }
    guard let durable, durable.sequence > pending.hint.sequence,
      durable.record.covers(pending.next)
    else { return .notCovering }
    return .covering(durable.record)
  }

  /// The older of the two slots in `bytes` when both are valid (version-1 slots whose checksum
  /// holds, of different sequences), else `nil`: the slot that is durable even while a writer
  /// holds the lock (`durableCover(_:lock:for:)`).
  static func durableSlot(in bytes: [UInt8]) -> (sequence: UInt64, record: ClockMarkRecord)? {
    var slots: [(sequence: UInt64, record: ClockMarkRecord)] = []
    for offset in MarkRecordCodec.slotOffsets {
      guard
        case .valid(let sequence, let record) = MarkRecordCodec.decode(
          bytes[offset..<(offset + 4096)])
      else { return nil }
      slots.append((sequence, record))
    }
    guard slots.count == 2, slots[0].sequence != slots[1].sequence else { return nil }
    return slots[0].sequence < slots[1].sequence ? slots[0] : slots[1]
  }
}
