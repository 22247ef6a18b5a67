extension FileClockMarkStore {
  /// One locked operation: the open store directory (the lock is held on `clock-mark.lock` beside
  /// it) and the record loaded in this operation, whose descriptor stays open for the write that
  /// may follow.
  public struct Access {
    let directory: FileDescriptor
    var loaded: LoadedRecord?
    /// Whether a sealed store may create a missing key (an online sign-in's reset only).
    var creatingKey = false
  }

  /// Opens the directory (created, mode 0700, unless `operation` is `observe`) and the lock
  /// file, takes `flock(LOCK_EX)`, runs `body`, and closes every descriptor (which releases the
  /// lock).
  public func withExclusiveAccess<Result>(
    for operation: ClockMarkStorageOperation,
    _ body: (inout Access) throws(StoreError) -> Result
  ) throws(StoreError) -> Result {
    try withLockedDirectory(
      creating: operation.createsStorage, repairing: operation == .reset, lock: .exclusive
    ) {
      directory throws(StoreError) in
      var access = Access(
        directory: directory, loaded: nil, creatingKey: operation == .reset)
      defer { if let loaded = access.loaded { system.closeIgnoringErrors(loaded.fd) } }
      return try body(&access)
    }
  }

  /// Opens the record (`O_NOFOLLOW`, non-blocking), checks it is a regular 0600 file of the
  /// exact size, reads both slots and returns the newest valid one.
  public func loadRecord(in access: inout Access, forWriting: Bool) throws(StoreError)
    -> ClockMarkRecord
  {
    // Only the online reset (the one operation that may create a key) reads a hard-linked
    // record, to replace it.
    let loaded = try load(
      in: access.directory, writable: forWriting, creatingKey: access.creatingKey,
      acceptingOtherNames: access.creatingKey)
    if let previous = access.loaded { system.closeIgnoringErrors(previous.fd) }
    access.loaded = loaded
    return loaded.record
  }

  /// Writes the slot that does not hold the newest valid record, then `fdatasync`s.
  public func writeObserved(_ record: ClockMarkRecord, in access: inout Access)
    throws(StoreError)
  {
    guard let loaded = access.loaded else {
      throw StoreError(code: .writeFailed, message: "no record was loaded before the write")
    }
    access.loaded = try writeNextSlot(record, over: loaded)
  }

  /// Creates the record file: temporary file, `fsync`, `rename`, `fsync` of the directory.
  public func writeFirst(_ record: ClockMarkRecord, in access: inout Access) throws(StoreError) {
    let seal = try newSealContext(in: access.directory, creatingKey: false)
    try replaceFile(with: record, in: access.directory, seal: seal)
  }

  /// Over a loaded record, writes both slots in place, one after the other, each synced; else,
  /// or when the loaded record has another name (a hard link), another owner or an insecure
  /// mode, replaces the file (temporary file and rename), so the other name keeps its bytes and
  /// the new record is this user's, 0600.
  public func writeReset(
    _ record: ClockMarkRecord, in access: inout Access, overLoadedRecord: Bool
  ) throws(StoreError) {
    if overLoadedRecord, let loaded = access.loaded, !loaded.mustBeReplaced {
      try writeBothSlots(record, over: loaded)
    } else {
      // The online path: a FIFO, directory or link in the record's place is removed first.
      removeNonRecord(in: access.directory)
      let seal = try newSealContext(in: access.directory, creatingKey: true)
      try replaceFile(with: record, in: access.directory, seal: seal)
    }
  }

  /// The store id of the sealed record loaded in this operation (its seals verified), else
  /// `nil`.
  public func sealedStoreID(in access: inout Access) -> [UInt8]? {
    access.loaded?.seal?.storeID
  }

  /// The highest generation among version-1 slots whose checksum holds.
  public func salvagedGeneration(in access: inout Access) -> UInt64? {
    salvagedGeneration(inDirectory: access.directory)
  }
}
