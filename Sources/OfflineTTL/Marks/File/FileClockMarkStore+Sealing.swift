extension FileClockMarkStore {
  /// Where slot `index`'s seal trailer starts: after the longest slot any version writes, in the
  /// same block.
  static func sealOffset(_ index: Int) -> Int {
    MarkRecordCodec.slotOffsets[index] + MarkRecordCodec.maximumSlotLength
  }

  /// Slot `index`'s own bytes: its length L is read from bytes 6–7 (the framing every version
  /// shares); an implausible L gives the longest slot, whose MAC then fails.
  static func slotBytes(_ bytes: [UInt8], _ index: Int) -> ArraySlice<UInt8> {
    let offset = MarkRecordCodec.slotOffsets[index]
    var length = Int(bytes[offset + 6]) | Int(bytes[offset + 7]) << 8
    if length < 16 || length > MarkRecordCodec.maximumSlotLength {
      length = MarkRecordCodec.maximumSlotLength
    }
    return bytes[offset..<(offset + length)]
  }

  /// The subkeys of this store's sealing key, or `nil` when the store is not sealed. Inside an
  /// operation's scope (``SealingKeyScope``: a sealed sign-in, whose commit point is this
  /// store's reset; a check; a read), the key that operation loaded first, whichever store
  /// loaded it. A key file's subkeys that this store value resolved before are reused while
  /// they are what the provider would load (``ResolvedSealKeys``).
  ///
  /// - Parameter creating: Whether a missing key may be created (online sign-in only).
  func sealKeys(creating: Bool) throws(StoreError) -> SealKeys? {
    // Named once per store value: a store has a name exactly when it is sealed.
    guard let name = sealingScopeName else { return nil }
    if let presetSealKeys { return presetSealKeys }
    // The operation's key, when it has one (no closure: the store value is not copied).
    if let kept = SealingKeyScope.kept(named: name) { return kept }
    return try SealingKeyScope.keys(named: name) { () throws(StoreError) -> SealKeys in
      guard let sealing else { preconditionFailure("a sealing name without a provider") }
      do throws(SealingKeyError) {
        guard creating else {
          guard let resolvedSealKeys else {
            return SealKeys.of(try sealing.loadKey(forStoreAt: directoryPath))
          }
          return try resolvedSealKeys.keys { () throws(SealingKeyError) in
            try sealing.loadKey(forStoreAt: directoryPath)
          }
        }
        try sealing.checkKeptOutside(storeDirectory: directoryPath)
        return SealKeys.of(try sealing.loadOrCreateKey())
      } catch {
        throw StoreError(sealingKey: error, provider: sealing)
      }
    }
  }

  /// Checks the seals of both slots of a loaded record against this store's configuration.
  ///
  /// Unsealed store: any sealed slot is `key_required`. Sealed store: every slot must carry a
  /// trailer (`seal_mismatch` otherwise), made with this key (`seal_mismatch`), whose MAC holds
  /// over the slot (`mark_unauthentic`; this includes a slot that fails its checksum: a sealed
  /// reader cannot tell damage from forgery, and both slots of a sealed record are always written
  /// valid), and both slots must name one store.
  ///
  /// - Returns: The seal context, or `nil` for an unsealed store.
  func checkSeals(_ bytes: [UInt8], creatingKey: Bool) throws(StoreError) -> MarkSeal.Context? {
    let slots = MarkRecordCodec.slotOffsets.indices.map { index in
      (
        slot: Self.slotBytes(bytes, index),
        trailer: bytes[Self.sealOffset(index)..<(Self.sealOffset(index) + MarkSeal.length)]
      )
    }
    guard let keys = try sealKeys(creating: creatingKey) else {
      if slots.contains(where: { MarkSeal.isPresent($0.trailer) }) {
        throw StoreError(
          code: .keyRequired,
          message: "\(Self.recordFileName) in \(directoryPath) is sealed; open the store with its "
            + "sealing key")
      }
      return nil
    }
    var storeID: [UInt8]?
    for (index, part) in slots.enumerated() {
      switch MarkSeal.verify(slot: part.slot, trailer: part.trailer, keys: keys) {
      case .unsealed:
        throw StoreError(
          code: .sealMismatch,
          message: "slot \(index) of \(Self.recordFileName) in \(directoryPath) carries no seal"
            + " (never sealed, or its seal was damaged), but this store expects one; left"
            + " alone until an online sign-in")
      case .otherKey:
        throw StoreError(
          code: .sealMismatch,
          message: "\(Self.recordFileName) in \(directoryPath) is sealed with another key; left "
            + "alone until an online sign-in")
      case .altered:
        throw markUnauthentic(index, "its MAC does not verify")
      case .authentic(let id):
        let offset = MarkRecordCodec.slotOffsets[index]
        guard case .valid = MarkRecordCodec.decode(bytes[offset..<(offset + 4096)]) else {
          throw markUnauthentic(index, "it does not decode")
        }
        if let storeID, storeID != id { throw markUnauthentic(index, "the slots name two stores") }
        storeID = id
      }
    }
    return MarkSeal.Context(keys: keys, storeID: storeID!)
  }

  private func markUnauthentic(_ slot: Int, _ why: String) -> StoreError {
    StoreError(
      code: .markUnauthentic,
      message: "slot \(slot) of \(Self.recordFileName) in \(directoryPath) is not authentic ("
        + "\(why)); left alone until an online sign-in")
  }

  /// The store id of any slot whose seal verifies with this key, in a record that could not be
  /// loaded (for a sign-in over it). Opened with the secure open (non-blocking, never following
  /// a link, checked on the descriptor): a record of the wrong type or size, another user's, one
  /// that group or others may write, or one with a second name gives `nil` (the sign-in then
  /// takes the id of its authentic index or staging, else a new one).
  func salvagedSeal(in directory: FileDescriptor, keys: SealKeys) -> [UInt8]? {
    guard
      let file = try? secure.openFile(
        Self.recordFileName, in: StoreDirectory(fd: directory, path: directoryPath), .readOnly)
    else { return nil }
    let fd = file.fd
    defer { system.closeIgnoringErrors(fd) }
    guard file.status.size == Int64(MarkRecordCodec.fileSize) else { return nil }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard (try? system.preadAll(fd, into: &bytes, at: 0)) == MarkRecordCodec.fileSize else {
      return nil
    }
    for index in MarkRecordCodec.slotOffsets.indices {
      let seal = Self.sealOffset(index)
      if case .authentic(let id) = MarkSeal.verify(
        slot: Self.slotBytes(bytes, index),
        trailer: bytes[seal..<(seal + MarkSeal.length)], keys: keys)
      {
        return id
      }
    }
    return nil
  }

  /// The seal context for a new or replaced sealed record: the key (created only when
  /// `creatingKey`), and the store id of the record it replaces when one of its slots verifies,
  /// else the store id of a sealed sign-in's staging (see ``stagedStoreID(in:keys:)``), else a
  /// new random id. `nil` for an unsealed store.
  func newSealContext(in directory: FileDescriptor, creatingKey: Bool) throws(StoreError)
    -> MarkSeal.Context?
  {
    guard let keys = try sealKeys(creating: creatingKey) else { return nil }
    let storeID =
      salvagedSeal(in: directory, keys: keys) ?? stagedStoreID(in: directory, keys: keys)
      ?? Sodium.randomBytes(MarkSeal.storeIDLength)
    return MarkSeal.Context(keys: keys, storeID: storeID)
  }

  /// The store id carried by a sealed sign-in's staged index (`cache/next-<g>/index`) whose
  /// header authenticates with this key, or `nil`.
  ///
  /// A sealed sign-in seals its staged items and index for a store id *before* its commit point
  /// (this store's reset) writes the record; when the record has no slot to take the id from (a
  /// first sign-in, or one over a forged or unsealed record), the reset takes the staging's, so
  /// that the committed items and the record name one store. The sign-in holds the cache's writer
  /// lock and has removed every other staging, so at most one is found. Every directory and the
  /// index are opened with the secure open: what is of the wrong type, another user's, writable
  /// by group or others, or (the index) has a second name is skipped.
  ///
  /// - Complexity: One directory listing and one 128-byte read per staging (at most one).
  func stagedStoreID(in directory: FileDescriptor, keys: SealKeys) -> [UInt8]? {
    guard
      let cache = try? secure.openDirectory(
        DirectoryCacheStore.cacheName, in: StoreDirectory(fd: directory, path: directoryPath),
        creating: false)
    else { return nil }
    defer { secure.close(cache) }
    guard let names = try? system.directoryEntries(cache.fd) else { return nil }
    for name in names where name.hasPrefix(DirectoryCacheStore.stagingPrefix) {
      guard let next = try? secure.openDirectory(name, in: cache, creating: false) else {
        continue
      }
      defer { secure.close(next) }
      guard
        let file = try? secure.openFile(DirectoryCacheStore.indexName, in: next, .readOnly)
      else { continue }
      let fd = file.fd
      defer { system.closeIgnoringErrors(fd) }
      var bytes = [UInt8](repeating: 0, count: CacheSeal.indexHeaderSize)
      guard (try? system.preadAll(fd, into: &bytes, at: 0)) == CacheSeal.indexHeaderSize,
        // Only the staging of the sign-in this reset commits (its index is bound to its id).
        case .success(let header) = CacheSeal.decodeIndexHeader(
          bytes, keys: keys, signIn: SignInScope.current)
      else { continue }
      return header.storeID
    }
    return nil
  }

  /// The generation and store id of the newest slot whose seal verifies with `keys`, read
  /// without the lock (as ``salvagedSeal(in:keys:)`` reads: a record of the wrong type or size,
  /// another user's, or one that group or others may write gives `nil`). For a sealed
  /// sign-in whose locked read of the record failed for something else than the record (a lock
  /// file of the wrong type, which its reset replaces): only sign-ins change the generation,
  /// and they hold the cache's writer lock.
  func authenticGeneration(keys: SealKeys) -> (generation: UInt64, storeID: [UInt8])? {
    guard let directory = try? secure.openDirectory(atPath: directoryPath, creating: false)
    else { return nil }
    defer { secure.close(directory) }
    guard
      let file = try? secure.openFile(
        Self.recordFileName, in: StoreDirectory(fd: directory.fd, path: directoryPath), .readOnly)
    else { return nil }
    let fd = file.fd
    defer { system.closeIgnoringErrors(fd) }
    guard file.status.size == Int64(MarkRecordCodec.fileSize) else { return nil }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    guard (try? system.preadAll(fd, into: &bytes, at: 0)) == MarkRecordCodec.fileSize else {
      return nil
    }
    var newest: (sequence: UInt64, generation: UInt64, storeID: [UInt8])?
    for index in MarkRecordCodec.slotOffsets.indices {
      let seal = Self.sealOffset(index)
      let slot = Self.slotBytes(bytes, index)
      guard
        case .authentic(let id) = MarkSeal.verify(
          slot: slot, trailer: bytes[seal..<(seal + MarkSeal.length)], keys: keys),
        case .valid(let sequence, let record) = MarkRecordCodec.decode(slot),
        newest.map({ sequence > $0.sequence }) ?? true
      else { continue }
      newest = (sequence, record.generation, id)
    }
    return newest.map { ($0.generation, $0.storeID) }
  }

  /// The store id of the record when one of its slots verifies with `keys`, read without the
  /// lock (every slot of a sealed record names the same store), or `nil`.
  func authenticStoreID(keys: SealKeys) -> [UInt8]? {
    guard let directory = try? secure.openDirectory(atPath: directoryPath, creating: false)
    else { return nil }
    defer { secure.close(directory) }
    return salvagedSeal(in: directory.fd, keys: keys)
  }

  /// The record and the store id, read under the shared lock (for the sealed item store, which
  /// binds its index to them).
  func readSealed() throws(StoreError) -> (record: ClockMarkRecord, storeID: [UInt8]?) {
    try withLockedDirectory(creating: false, lock: .shared) {
      directory throws(StoreError) in
      let loaded = try load(in: directory, writable: false)
      system.closeIgnoringErrors(loaded.fd)
      return (loaded.record, loaded.seal?.storeID)
    }
  }
}

extension StoreError {
  /// A store error for a sealing key that cannot be had: `key_unavailable`, with the key error's
  /// code as ``StoreError/keyProblem`` (and in the message) and its keyring reason, if any;
  /// `lock_timed_out` for a key whose creation lock another holder kept past its limit.
  init(sealingKey error: SealingKeyError, provider: any SealingKeyProvider) {
    self.init(
      code: error.code == .lockTimedOut ? .lockTimedOut : .keyUnavailable, errno: error.errno,
      unusableReason: error.unusableReason, keyProblem: error.code,
      message: "\(error.code) (\(provider)): \(error.reason)")
  }
}
