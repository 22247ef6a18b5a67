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
  /// An observation through the kept descriptors `files` (`keptHandles()`: from the second
  /// operation of an unsealed store value on), with group commit; `nil` when the caller must
  /// take the full locked path (a read-only record, or a check that failed: the full path then
  /// reports the problem as before).
  ///
  /// 1. Takes a kept lock descriptor of its own and tries `flock(LOCK_EX | LOCK_NB)`.
  /// 2. When another writer holds the lock, reads the record first (one `pread`, a hint, unless
  ///    `pending` already holds a validated read) and its clocks after it, then waits for the
  ///    lock.
  /// 3. Under the lock, checks that the directory, the record and the lock file are the kept
  ///    ones (`checkKept(_:)`), and reads the record (one `pread`), as the locked path loads it.
  /// 4. If another write since the read before the lock (a higher sequence) left a record that
  ///    ``ClockMarkRecord/covers(_:)`` this observation's result, returns without writing or
  ///    syncing: the covering record was read under the exclusive lock, so its write completed,
  ///    `fdatasync` included. The answer is judged on the record read before and on this
  ///    observation's own clocks.
  /// 5. Otherwise reads the clocks (again) under the lock, after the record: the latest reading
  ///    covers every observation that read its clocks while waiting. Writes the next slot and
  ///    `fdatasync`s when ``ClockMarkRecord/needsWrite(becoming:resolution:)`` says so, then
  ///    releases the lock.
  ///
  /// System calls, a writing observation alone: `flock` (non-blocking, granted), `lstat`,
  /// 2 `fstatat`, `pread`, `pwrite`, `fdatasync`, `flock` (release). Waiting: 1 more `flock`
  /// and 1 `pread` before the lock; covered: no `pwrite`, no `fdatasync`.
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
      do {
        try system.flock(lock, .exclusive)
      } catch {
        files.giveBack(lock)
        return nil
      }
    }
    defer { files.unlockAndGiveBack(lock) }
    guard checkKept(files) else {
      dropKeptFiles(files)
      return nil
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count = try? system.preadAll(files.record, into: &bytes, at: 0)
    guard case .record(let loaded) = decodeKept(bytes, count: count, files) else { return nil }
    let previous = loaded.record
    if let pending, loaded.sequence > pending.hint.sequence, previous.covers(pending.next) {
      // Another observation wrote at least this much, and it is durable (read under the lock).
      return ClockMarkTransition(
        previous: pending.hint.record, current: pending.next, wrote: false,
        observation: pending.observation, coveringRecord: previous)
    }
    return try advance(
      previous, observation: clocks(), resolution: resolution, sealedStoreID: nil
    ) { next throws(StoreError) in
      try writeNextSlot(next, over: loaded)
    }
  }
}
