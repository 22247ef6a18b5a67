/// The storage primitives of a ``ClockMarkStore`` backend: a lock, loading the record, and
/// writing one. The store's state machine (observe, create the first mark, reset after an online
/// sign-in) is written once, in this protocol's extension, and shared by every backend, as
/// swift-log's `Logger` does the shared work so that each `LogHandler` stays small.
///
/// A backend conforms to this protocol and implements ``ClockMarkStore/read()``; it gets
/// ``ClockMarkStore/observe(readingClocks:)``, ``ClockMarkStore/createFirstMark(_:)`` and
/// ``ClockMarkStore/resetAfterOnlineSignIn(_:)`` from the extension:
/// - **observe**: under the exclusive lock, load the record (absent and unreadable are thrown,
///   nothing is created), read the clocks once, advance with ``ClockMarkRecord/observing(_:)``,
///   and write with ``writeObserved(_:in:)`` only when
///   ``ClockMarkRecord/needsWrite(becoming:resolution:)`` says so.
/// - **create first**: under the lock (storage created when missing), return the existing record,
///   leave an unreadable one alone, or write generation 0 with ``writeFirst(_:in:)``.
/// - **reset**: under the lock, write generation + 1 over a readable record; over an absent one
///   generation 1; over an unreadable one 1 + ``salvagedGeneration(in:)`` (or 1), with
///   ``writeReset(_:in:overLoadedRecord:)``.
///
/// Every primitive throws only ``StoreError`` and runs inside ``withExclusiveAccess(for:_:)``.
public protocol ClockMarkStorage: ClockMarkStore {
  /// What one locked operation holds: open descriptors, a found secret, the locked state.
  associatedtype Access

  /// Takes the backend's exclusive lock (across threads and processes, where the backend is
  /// shared by processes), runs `body`, and releases the lock and everything `body` opened.
  ///
  /// - Parameters:
  ///   - operation: Which operation runs: ``ClockMarkStorageOperation/observe`` creates
  ///     nothing (a missing store is `absent`); the others may create the storage.
  ///   - body: The operation's steps.
  /// - Returns: What `body` returned.
  /// - Throws: ``StoreError``: `lockFailed`, `storeUnusable`, `absent`, or what `body` throws.
  func withExclusiveAccess<Result>(
    for operation: ClockMarkStorageOperation,
    _ body: (inout Access) throws(StoreError) -> Result
  ) throws(StoreError) -> Result

  /// The stored record, under the lock.
  ///
  /// - Parameters:
  ///   - access: The locked operation.
  ///   - forWriting: Whether a write may follow (a backend may open the record read-write).
  /// - Returns: The record.
  /// - Throws: ``StoreError``: `absent`, `unreadable` (bytes untouched), or an I/O failure.
  func loadRecord(in access: inout Access, forWriting: Bool) throws(StoreError)
    -> ClockMarkRecord

  /// Makes an observed record durable over the record ``loadRecord(in:forWriting:)`` returned.
  ///
  /// - Throws: ``StoreError`` `writeFailed` with the previous record intact.
  func writeObserved(_ record: ClockMarkRecord, in access: inout Access) throws(StoreError)

  /// Creates the first record where none exists (``loadRecord(in:forWriting:)`` threw `absent`).
  ///
  /// - Throws: ``StoreError`` `writeFailed`.
  func writeFirst(_ record: ClockMarkRecord, in access: inout Access) throws(StoreError)

  /// Makes a reset record durable, replacing what is stored.
  ///
  /// - Parameters:
  ///   - record: The reset record.
  ///   - access: The locked operation.
  ///   - overLoadedRecord: Whether ``loadRecord(in:forWriting:)`` succeeded in this operation
  ///     (`false`: the record was absent, unreadable or could not be opened).
  /// - Throws: ``StoreError`` `writeFailed` with the old bytes intact.
  func writeReset(_ record: ClockMarkRecord, in access: inout Access, overLoadedRecord: Bool)
    throws(StoreError)

  /// The highest generation that can still be read from a record that did not load, or `nil`.
  /// A reset continues from it so that generations never repeat.
  func salvagedGeneration(in access: inout Access) -> UInt64?

  /// The store id of the sealed record ``loadRecord(in:forWriting:)`` loaded in this operation,
  /// `nil` for a backend or a store that does not seal (the default).
  func sealedStoreID(in access: inout Access) -> [UInt8]?
}

/// Which state-machine operation a ``ClockMarkStorage`` lock is taken for.
public enum ClockMarkStorageOperation: Sendable, Hashable {
  /// ``ClockMarkStore/observe(resolution:readingClocks:)``: creates nothing.
  case observe
  /// ``ClockMarkStore/createFirstMark(readingClocks:)``.
  case createFirstMark
  /// ``ClockMarkStore/resetAfterOnlineSignIn(readingClocks:)``.
  case reset

  /// Whether the operation may create the storage (a directory, a lock file).
  public var createsStorage: Bool { self != .observe }
}

extension ClockMarkStorage {
  /// The default: no sealed store id.
  public func sealedStoreID(in access: inout Access) -> [UInt8]? { nil }

  /// Advances the mark under the exclusive lock; the one implementation every backend shares.
  ///
  /// - Parameters:
  ///   - resolution: The smallest rise worth a durable write; zero or less writes every rise.
  ///   - clocks: Reads the clocks; called once, under the lock, after the record loaded.
  /// - Returns: The record before and after, and the observation used.
  /// - Throws: ``StoreError``: `absent` (nothing is created), `unreadable` (bytes untouched),
  ///   `store_from_another_machine` (the record is bound to another machine, or this machine's
  ///   id cannot be read: ``ClockMarkRecord/machineRefusal(for:)``; nothing written),
  ///   `writeFailed` (the old record reads back), `lockFailed`, `storeUnusable`.
  public func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition
  {
    try observeUnderLock(resolution: resolution, readingClocks: clocks)
  }

  /// ``observe(resolution:readingClocks:)`` under the exclusive lock: load the record, read the
  /// clocks after it, advance and write (`advance(_:observation:resolution:sealedStoreID:write:)`).
  ///
  /// - Parameters:
  ///   - resolution: As ``observe(resolution:readingClocks:)``.
  ///   - clocks: Reads the clocks; called once, under the lock, after the record loaded.
  func observeUnderLock(
    resolution: Duration, readingClocks clocks: () -> ClockObservation
  ) throws(StoreError) -> ClockMarkTransition {
    try withExclusiveAccess(for: .observe) { access throws(StoreError) in
      let previous = try loadRecord(in: &access, forWriting: true)
      let observation = clocks()
      let storeID = sealedStoreID(in: &access)
      return try advance(
        previous, observation: observation, resolution: resolution, sealedStoreID: storeID
      ) { next throws(StoreError) in
        try writeObserved(next, in: &access)
      }
    }
  }

  /// The one advance of an observation, under the exclusive lock, given the record loaded under
  /// it and clocks read after that record: refuses another machine's record (nothing written),
  /// computes ``ClockMarkRecord/observing(_:)``, and calls `write` only when
  /// ``ClockMarkRecord/needsWrite(becoming:resolution:)`` says so.
  ///
  /// - Parameters:
  ///   - previous: The record loaded under the lock.
  ///   - observation: Clocks read after `previous` was loaded.
  ///   - resolution: The smallest rise worth a durable write.
  ///   - sealedStoreID: The sealed record's store id, or `nil`.
  ///   - write: Makes the advanced record durable.
  /// - Returns: The transition.
  /// - Throws: ``StoreError``: `store_from_another_machine`, or what `write` throws.
  func advance(
    _ previous: ClockMarkRecord, observation: ClockObservation, resolution: Duration,
    sealedStoreID: [UInt8]?, write: (ClockMarkRecord) throws(StoreError) -> Void
  ) throws(StoreError) -> ClockMarkTransition {
    // Evidence of another machine is never advanced here (nothing is written).
    if let refusal = previous.machineRefusal(for: observation) { throw refusal }
    let next = previous.observing(observation)
    guard previous.needsWrite(becoming: next, resolution: resolution) else {
      return ClockMarkTransition(
        previous: previous, current: next, wrote: false, observation: observation,
        sealedStoreID: sealedStoreID)
    }
    assert(next.mark >= previous.mark, "an observation lowered the mark")
    assert(next.generation == previous.generation, "an observation changed the generation")
    try write(next)
    return ClockMarkTransition(
      previous: previous, current: next, wrote: true, observation: observation,
      sealedStoreID: sealedStoreID)
  }

  /// Creates generation 0 at the wall reading when no record exists; an existing record,
  /// readable or not, is left untouched. The one implementation every backend shares.
  ///
  /// - Parameter clocks: Reads the clocks; called under the lock, only when no record exists.
  /// - Returns: The record now stored.
  /// - Throws: ``StoreError``: `unreadable` (not replaced), `writeFailed`, `lockFailed`,
  ///   `storeUnusable`.
  public func createFirstMark(readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkRecord
  {
    try withExclusiveAccess(for: .createFirstMark) { access throws(StoreError) in
      do throws(StoreError) {
        return try loadRecord(in: &access, forWriting: false)
      } catch  where error.code == .absent {
        let first = ClockMarkRecord.afterOnlineSignIn(generation: 0, at: clocks())
        try writeFirst(first, in: &access)
        return first
      }
    }
  }

  /// The generation an online sign-in's reset writes over what `access` holds, and whether the
  /// record loaded: generation + 1 over a readable record, 1 over an absent one, 1 + the salvaged
  /// generation (else 1) over one that is unreadable, altered, unsealed or sealed with another
  /// key. The one computation the reset (``resetAfterOnlineSignIn(readingClocks:)``) and a
  /// sealed sign-in planning its staging share, so that the staging is sealed for exactly the
  /// generation its commit point writes.
  ///
  /// - Throws: ``StoreError``: a load failure other than those (nothing is written on it).
  func signInGeneration(in access: inout Access, forWriting: Bool) throws(StoreError)
    -> (generation: UInt64, loaded: Bool)
  {
    do throws(StoreError) {
      return (
        ClockMarkRecord.generation(
          after: try loadRecord(in: &access, forWriting: forWriting).generation), true
      )
    } catch  where error.code == .absent {
      return (1, false)
    } catch
      where error.code == .unreadable || error.code == .markUnauthentic
      || error.code == .sealMismatch
    {
      // A sealed record that is altered, unsealed or sealed with another key is replaced like
      // an unreadable one: the online sign-in re-seals it.
      return (salvagedGeneration(in: &access).map(ClockMarkRecord.generation(after:)) ?? 1, false)
    }
  }

  /// Writes the record an online sign-in earns: generation + 1 over a readable record (after a
  /// crafted `UInt64.max`, 1: ``ClockMarkRecord/generation(after:)``), 1 over an
  /// absent one, 1 + the salvaged generation (else 1) over one that is unreadable; mark = the
  /// wall reading even when lower; floor re-anchored. The one implementation every backend
  /// shares.
  ///
  /// - Parameter clocks: Reads the clocks; called once, under the lock, before the record is
  ///   read.
  /// - Returns: The new record.
  /// - Throws: ``StoreError``: `writeFailed` (the old bytes intact), `lockFailed`,
  ///   `storeUnusable`, `clockUnreadable` (the reading carries a TPM failure,
  ///   ``ClockObservation/tpmError``: a configured TPM's protection would be missing from the new
  ///   record), `machine_id_unreadable` (this machine's id is there but cannot be read,
  ///   ``ClockObservation/machineError``); a load failure other than `absent`, `unreadable`,
  ///   `mark_unauthentic` or `seal_mismatch` (a read-only file system, an unusable service, a
  ///   missing sealing key, `key_required`) is thrown as it is. Nothing is written on any of them.
  public func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkRecord
  {
    // The sign-in whose commit point this reset is (set by the item store around it, on this
    // thread), read before any lock: only its staging is rolled forward under the new record.
    let signIn = SignInScope.current
    return try withExclusiveAccess(for: .reset) { access throws(StoreError) in
      let observation = clocks()
      if let tpmError = observation.tpmError {
        throw StoreError(
          code: .clockUnreadable,
          message: "the configured TPM cannot be read, so the sign-in is not recorded:"
            + " \(tpmError)")
      }
      if observation.machine == nil, let unreadable = observation.machineError {
        // Writing an unbound record would silently drop the machine binding.
        throw StoreError(
          code: .machineIDUnreadable, errno: unreadable.errno,
          message: "this machine's id cannot be read (\(unreadable)), so the sign-in is not"
            + " recorded: a record it wrote would not be bound to this machine")
      }
      let (generation, loaded) = try signInGeneration(in: &access, forWriting: true)
      var record = ClockMarkRecord.afterOnlineSignIn(generation: generation, at: observation)
      record.signInID = signIn
      try writeReset(record, in: &access, overLoadedRecord: loaded)
      return record
    }
  }
}
