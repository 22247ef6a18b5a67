import Foundation

/// The embedded default ``ClockMarkStore``: one small file in the store directory, written in
/// place into two alternating checksummed slots and made durable with one `fdatasync`, serialized
/// across threads and processes by `flock` on a lock file beside it.
///
/// ## Files in the store directory
/// The directory (created 0700 when an operation that writes finds it missing) is shared with the
/// cache's items. This store uses only the names in ``reservedFileNames``:
/// - ``recordFileName`` (`clock-mark`): the record, exactly 8,192 bytes, mode 0600. Its format is
///   documented byte by byte in `docs/mark-record-format.md`.
/// - ``lockFileName`` (`clock-mark.lock`): empty, mode 0600; never delete it while the store is in
///   use (a new lock file would not exclude holders of the old one).
/// - ``temporaryFileName`` (`clock-mark.tmp`): exists only while a record is created or replaced.
///
/// ## Guarantees (<doc:Rules#Clock-mark>, <doc:Rules#Fail-closed>, <doc:Rules#Durable-and-private-storage>)
/// - Every operation that may write holds `flock` on the lock file for its whole read → advance
///   → write (exclusive). Each operation locks through a lock descriptor of its own (opened for
///   it, or a kept one no other operation is using), so threads sharing one instance exclude
///   each other too (`flock` locks belong to an open file description). From the second
///   operation of an unsealed store value on, the directory, the record and lock descriptors
///   stay open and are checked at every call (`checkKept`); ``read()`` and an
///   ``observe(resolution:readingClocks:)`` that needs no write read under a
///   `flock(LOCK_SH | LOCK_NB)` that never waits (`keptOpenRecord()`), or, on a local file
///   system, reuse that read without any lock while a change watch reports nothing; while a
///   writer holds the lock they wait for it as before.
/// - Observations that arrive while another writer holds the lock share its write (group
///   commit, ``observe(resolution:readingClocks:)``): one whose result the record found under
///   the exclusive lock already covers (``ClockMarkRecord/covers(_:)``) writes and syncs
///   nothing; the covering record is durable because a write holds the lock until its
///   `fdatasync` has returned. No answer is given before its mark, or a higher one, is durable.
/// - An observation writes the slot that does *not* hold the newest valid record, with the next
///   sequence number and a CRC-32, then `fdatasync`s. A crash at any instant leaves the old slot
///   intact; a torn new slot fails its checksum and the reader takes the old one. The slot that
///   holds the last acknowledged record is never overwritten by the next write. If the write or
///   the sync fails, the slot's previous bytes are written back (best effort) and
///   ``StoreError/Code/writeFailed`` is thrown: the store reads back the old record.
/// - A record is created (``createFirstMark(_:)``, or ``resetAfterOnlineSignIn(_:)`` over an absent
///   or unreadable one) as a temporary file: write, `fsync`, `rename`, `fsync` of the directory.
/// - Every open uses `O_NOFOLLOW | O_CLOEXEC`: a symbolic link in place of the record, the lock
///   file or the directory itself is an error, never followed.
/// - A record that is a symbolic link, a directory or other non-regular file, of the wrong size
///   (a larger one is rejected from `fstat` alone, without reading it), readable or writable by
///   group or others, with no slot passing its checksum, or of an unknown version is
///   ``StoreError/Code/unreadable`` with its reason, and its bytes are left exactly as
///   they were: only ``resetAfterOnlineSignIn(_:)`` replaces it.
/// - **Trade-off of two slots:** a damaged (bit-flipped) *newest* slot is not reported: the
///   reader falls back to the other slot, which holds the record before the last write (after a
///   crash, the last acknowledged one). So a flip can only cost the last rise of the mark, never
///   raise it; a reset in place writes both slots, so a flip never undoes a reset. Damage to both
///   slots is `unreadable (bad_checksum)`.
///
/// ``resetAfterOnlineSignIn(_:)`` over an unreadable record writes generation
/// `1 + the highest generation in any version-1 slot whose checksum holds` (read only from a
/// regular file of at most 8,192 bytes), else 1; over an absent record, 1.
///
/// Cost: a writing observation through the kept descriptors is nine system calls (two `flock`s,
/// a `geteuid` and three checks, a `pread`, the `pwrite` and its `fdatasync` of one 4 KiB
/// block); with a change watch that saw nothing since the store's own last write, seven (two
/// `flock`s, a `poll` and a `geteuid`, the `pwrite`, a `read` of the watch, and the
/// `fdatasync`: no check by name, no `pread`); the first operation of a store value about twenty (see
/// `Benchmarks/README.md`, section `mark`). The record is checked with `statx`
/// without its times and opened with `O_NOATIME`, so that neither a check nor a read makes the
/// next write change the inode (which would cost the `fdatasync` a second block).
public struct FileClockMarkStore: ClockMarkStorage {
  /// The record file's name in the store directory: `clock-mark`.
  public static let recordFileName = "clock-mark"
  /// The lock file's name in the store directory: `clock-mark.lock`.
  public static let lockFileName = "clock-mark.lock"
  /// The temporary file used while creating or replacing the record: `clock-mark.tmp`.
  public static let temporaryFileName = "clock-mark.tmp"
  /// Every name this store may create in its directory. Other stores sharing the directory (the
  /// item cache) must not use these names.
  public static let reservedFileNames: Set<String> = [
    recordFileName, lockFileName, temporaryFileName,
  ]
  /// The exact size of a record file, in bytes.
  public static let recordFileSize = MarkRecordCodec.fileSize

  /// The store directory's path.
  public let directoryPath: String
  /// The sealing key's provider when the store is sealed (each slot then carries a MAC), else
  /// `nil`.
  public let sealing: (any SealingKeyProvider)?
  let system: Syscalls
  /// The sealing subkeys, already loaded and checked by the caller (the sealed item store reading
  /// the mark it is bound to), so that one operation loads the key once; `nil`: load them.
  var presetSealKeys: SealKeys? = nil
  /// The descriptors kept open between operations (`keptOpenRecord()`, `observeKept`), shared
  /// by every copy of this value.
  let kept: KeptMarkFiles
  /// The subkeys this store value last resolved from a key-file provider's memory (`nil` for
  /// any other provider); shared by every copy of this value.
  let resolvedSealKeys: ResolvedSealKeys?
  /// The record bytes a sealed store value last verified (`observeSealed`).
  let sealedMemo = SealedMarkMemo()
  /// The sealing key's name in an operation's scope (built once; `nil` when unsealed). A gate
  /// whose item store names the same key in other words sets it to the item store's provider's
  /// name, so that the two share one key per operation.
  var sealingScopeName: SealingKeyScope.Name?
  /// How long an operation waits for `clock-mark.lock` while another thread or process holds it;
  /// past it the operation fails with ``StoreError/Code/lockTimedOut`` (the gate refuses with
  /// it, `expired`) and reads, writes and deletes nothing. Zero or less: never wait. Default
  /// ``defaultLockTimeout``, 30 seconds: far longer than an honest holder keeps the lock (one
  /// record write and its `fdatasync`), short enough that a holder stopped with `SIGSTOP`, hung,
  /// or holding the lock on purpose cannot make every check wait forever. On Linux the kernel
  /// waits (a blocking `flock`, ended at the limit by a timer signal to the waiting thread);
  /// on a thread that blocks that signal (a Dispatch queue's) and elsewhere the wait polls
  /// (`flock(LOCK_NB)` and short pauses); see `Syscalls.flock(_:_:waitingAtMost:)`.
  public var lockTimeout: Duration = FileClockMarkStore.defaultLockTimeout
  /// The default ``lockTimeout``: 30 seconds.
  public static let defaultLockTimeout: Duration = .seconds(30)

  /// Creates a store in a directory. Does no I/O: the directory is opened (and, by an operation
  /// that writes, created with mode 0700) by each operation.
  ///
  /// - Parameter directory: The store directory, a `file:` URL.
  public init(at directory: URL) {
    self.init(atPath: directory.path)
  }

  /// Creates a sealed (or, with `nil`, unsealed) store in a directory given as a file URL; as
  /// ``init(atPath:sealing:)``.
  ///
  /// - Parameters:
  ///   - directory: The store directory, a `file:` URL.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  public init(at directory: URL, sealing: (any SealingKeyProvider)?) {
    self.init(atPath: directory.path, sealing: sealing)
  }

  /// Creates a store in a directory given by path. Does no I/O.
  ///
  /// - Parameter path: The store directory.
  public init(atPath path: String) {
    self.init(atPath: path, sealing: nil)
  }

  /// Creates a store in a directory, sealed with the key of `sealing` when it is given. Does no
  /// I/O.
  ///
  /// A sealed store writes a MAC after each slot (keyed with a subkey of the store key, over the
  /// whole slot) and refuses a record whose slots are not sealed (`seal_mismatch`), sealed with
  /// another key (`seal_mismatch`), or altered (`mark_unauthentic`), leaving its bytes alone. An
  /// unsealed store refuses a sealed record (`key_required`). Only
  /// ``resetAfterOnlineSignIn(readingClocks:)`` may create a missing key; see
  /// `docs/mark-record-format.md`.
  ///
  /// - Parameters:
  ///   - path: The store directory.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  public init(atPath path: String, sealing: (any SealingKeyProvider)?) {
    self.directoryPath = path
    self.sealing = sealing
    self.system = Syscalls()
    self.kept = KeptMarkFiles(system: system)
    self.sealingScopeName = sealing.map { SealingKeyScope.Name($0, directory: path) }
    self.resolvedSealKeys = ResolvedSealKeys(sealing, directory: path)
  }

  /// Creates a store whose system calls consult a fault plan (tests only).
  ///
  /// - Parameters:
  ///   - path: The store directory.
  ///   - faults: The plan every system call of this instance consults.
  @_spi(Testing)
  public init(
    atPath path: String, faults: SyscallFaultPlan?, sealing: (any SealingKeyProvider)? = nil
  ) {
    self.directoryPath = path
    self.sealing = sealing
    self.system = Syscalls(faults: faults)
    self.kept = KeptMarkFiles(system: system)
    self.sealingScopeName = sealing.map { SealingKeyScope.Name($0, directory: path) }
    self.resolvedSealKeys = ResolvedSealKeys(sealing, directory: path)
  }

  /// The current record, under a shared lock, writing nothing.
  ///
  /// From the second operation of a store value on, the store reads through descriptors it
  /// keeps open, checked at every call, without waiting for the lock (`keptOpenRecord()`; a
  /// sealed store only a record whose seals this operation's key verified,
  /// `keptSealedRecord()`); while a writer holds the lock, or when a check fails, it waits for
  /// the shared lock as before, at most ``lockTimeout``.
  ///
  /// When another holder keeps the lock past ``lockTimeout``, the record is read without the
  /// lock (the same checks, the newest slot that passes its checksum; a write in flight leaves
  /// the slot it writes failing its checksum, and the other one is read). A read writes nothing
  /// and grants nothing: the gate's check observes under the exclusive lock and refuses with
  /// `lock_timed_out`, and an open reader's recheck judges the clocks, read after it, against
  /// this record, which is at least the mark the reader was opened with. An online sign-in
  /// never uses it (``generationForSignIn()``).
  ///
  /// - Returns: The newest valid record.
  /// - Throws: ``StoreError``: `absent` (no directory, or no record), `unreadable`,
  ///   `lockFailed` or `storeUnusable`.
  public func read() throws(StoreError) -> ClockMarkRecord {
    try read(withoutTheLockPastItsLimit: true)
  }

  /// The stored generation for an online sign-in (see
  /// ``ClockMarkStore/generationForSignIn()``), read under the shared lock only: past
  /// ``lockTimeout`` it throws `lock_timed_out` instead of reading without the lock as
  /// ``read()`` does, so a sign-in behind a held mark lock ends before it stages anything
  /// (its reset would wait as long again, and fail).
  ///
  /// - Returns: The stored generation, or `nil` for an absent or unreadable record.
  /// - Throws: ``StoreError`` `lock_timed_out`.
  public func generationForSignIn() throws(StoreError) -> UInt64? {
    do {
      return try read(withoutTheLockPastItsLimit: false).generation
    } catch  where error.code == .lockTimedOut {
      throw error
    } catch {
      return nil
    }
  }

  /// ``read()``; with `withoutTheLockPastItsLimit` false, a lock held past ``lockTimeout`` is
  /// thrown (`lock_timed_out`) rather than read around.
  func read(withoutTheLockPastItsLimit fallback: Bool) throws(StoreError) -> ClockMarkRecord {
    if sealing == nil, let record = keptOpenRecord() { return record }
    if sealing != nil, let (hint, _) = keptSealedRecord() { return hint.record }
    let record: ClockMarkRecord
    do {
      record = try withLockedDirectory(creating: false, lock: .shared) {
        directory throws(StoreError) in
        let loaded = try load(in: directory, writable: false)
        system.closeIgnoringErrors(loaded.fd)
        return loaded.record
      }
    } catch  where error.code == .lockTimedOut && fallback {
      return try withLockedDirectory(creating: false, lock: nil) {
        directory throws(StoreError) in
        let loaded = try load(in: directory, writable: false)
        system.closeIgnoringErrors(loaded.fd)
        return loaded.record
      }
    }
    noteOperation()
    return record
  }

  /// Advances the mark: the shared state machine of ``ClockMarkStorage`` under the exclusive
  /// lock, through descriptors kept open from the second operation of an unsealed store value
  /// on, and sharing one durable write among observations that arrive together (group commit).
  ///
  /// - With a positive `resolution`, the record is first read without waiting for the lock
  ///   (`keptOpenRecord()`: every check and a non-blocking shared lock so that no write is in
  ///   flight, or that read reused while the change watch reports nothing) and the clocks after
  ///   it; when ``ClockMarkRecord/needsWrite(becoming:resolution:)``
  ///   says no write is needed, the observation returns without taking the lock and without
  ///   writing.
  /// - Otherwise the exclusive lock is taken on a kept lock descriptor (`observeKept`). When
  ///   another writer holds it, the observation first reads the record (a hint) and its clocks
  ///   after it, then polls for a durable record that covers it, read without waiting for any
  ///   lock (the newest slot under a non-blocking shared lock, else the older of two valid
  ///   slots: the newer may be the write in flight), answering at once when there is one; else
  ///   it tries the lock again without waiting, and after about 100 ms waits for it (`flock` is
  ///   not fair: a waiter blocked in it can wait through many writes that already cover it).
  ///   Under the lock the kept files are checked and the record read again. If another observation wrote since (a higher sequence) a record that
  ///   ``ClockMarkRecord/covers(_:)`` this observation's result, nothing is written and no
  ///   `fdatasync` is made: the answer is judged against the record read before and this
  ///   observation's own clocks, and the covering record is returned
  ///   (``ClockMarkTransition/coveringRecord``). Otherwise the clocks are read (again) under the
  ///   lock and the observation runs as the shared state machine's.
  /// - A sealed store reads through the kept descriptors only when no write is needed
  ///   (`observeSealed`).
  /// - The first operation of a store value, a sealed store's write, and any check of the kept
  ///   files that fails take the full locked path (open the directory, the lock file and the record,
  ///   as ``ClockMarkStorage`` describes), which reports any problem.
  ///
  /// **Why a covering record is durable.** Every write holds the exclusive lock from its read
  /// of the record until its `fdatasync` has returned (``withExclusiveAccess(for:_:)``; a reset
  /// also until its rename and directory `fsync`), and a failed write puts the slot's previous
  /// bytes back before it releases the lock. So a record read while holding the exclusive lock
  /// was written by a write that completed, durably: no write is in flight. A record read
  /// *without* the lock may be a write in flight, not yet durable; that read is only a hint and
  /// never covers anything. Without the lock, the older of two valid slots is durable too: the
  /// writer holding the lock writes the other slot, and took the lock only after the older
  /// slot's writer had returned from its `fdatasync`. The model `Models/mark-protocol.pml`
  /// checks this (the group observers; the negative models that check coverage on the newest
  /// slot without the lock lose a granted mark at a power loss).
  ///
  /// **Why most waiters are covered.** A writer reads its clocks under the lock, after every
  /// observation that waited for the lock meanwhile read theirs; so with honest clocks the mark
  /// it writes covers all of them, and each of them then only checks, reads and releases.
  /// A waiter is never given another writer's reading as its own: its answer is judged on its
  /// own clocks (a writer whose clock was behind writes a record without its wall reading,
  /// which covers nothing above it).
  ///
  /// - Parameters:
  ///   - resolution: The smallest rise worth a durable write; zero or less writes every rise.
  ///   - clocks: Reads the clocks; called after the record was read, once, or twice when it was
  ///     read before the lock and the record under the lock does not cover the result.
  /// - Returns: The record before and after, and the observation used.
  /// - Throws: As ``ClockMarkStorage``'s observe: `absent`, `unreadable`,
  ///   `store_from_another_machine`, `writeFailed`, `lockFailed`, `storeUnusable`.
  public func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition
  {
    if sealing != nil { return try observeSealed(resolution: resolution, readingClocks: clocks) }
    guard let files = keptHandles() else {
      let transition = try observeUnderLock(resolution: resolution, readingClocks: clocks)
      noteOperation()
      return transition
    }
    var pending: PendingObservation? = nil
    if resolution > .zero, let hint = validatedKeptRecord(files) {
      let observation = clocks()
      let next = hint.record.observing(observation)
      // Another machine's record, or a write that is needed: the locked path decides.
      guard hint.record.machineRefusal(for: observation) == nil else {
        return try observeUnderLock(resolution: resolution, readingClocks: clocks)
      }
      if !hint.record.needsWrite(becoming: next, resolution: resolution) {
        return ClockMarkTransition(
          previous: hint.record, current: next, wrote: false, observation: observation)
      }
      pending = PendingObservation(hint: hint, observation: observation, next: next)
    }
    if let transition = try observeKept(
      files, resolution: resolution, readingClocks: clocks, pending: pending)
    {
      return transition
    }
    return try observeUnderLock(resolution: resolution, readingClocks: clocks)
  }

  // observe(readingClocks:), createFirstMark(_:) and resetAfterOnlineSignIn(_:) are the shared
  // state machine of ClockMarkStorage; this store supplies the primitives in
  // FileClockMarkStore+Storage.swift.
}
