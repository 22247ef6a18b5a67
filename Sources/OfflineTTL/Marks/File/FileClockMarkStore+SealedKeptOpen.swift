import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The record bytes a sealed ``FileClockMarkStore`` value last verified, with the mark subkey
/// that verified them and the store id their seals name: verifying the same bytes with the
/// same key again gives the same answer (a MAC is a function of the bytes and the key), so a
/// repeated observation whose record did not change computes no MAC. Shared by every copy of
/// one store value.
final class SealedMarkMemo: Sendable {
  private struct Verified: Sendable {
    let bytes: [UInt8]
    let markKey: [UInt8]
    let storeID: [UInt8]
  }

  private let verified = Mutex<Verified?>(nil)

  /// The store id verified for exactly `bytes` under `markKey`, or `nil`.
  ///
  /// - Complexity: O(record size): one comparison of the bytes, one of the key in constant time.
  func storeID(of bytes: [UInt8], markKey: [UInt8]) -> [UInt8]? {
    verified.withLock { verified in
      guard let verified, Self.sameBytes(verified.bytes, bytes),
        Sodium.equalInConstantTime(verified.markKey, markKey)
      else { return nil }
      return verified.storeID
    }
  }

  /// Whether `a` and `b` hold the same bytes (`memcmp`: the element-wise `==` of two arrays
  /// costs more than the MACs it saves).
  private static func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { x in
      b.withUnsafeBytes { y in
        x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
      }
    }
  }

  /// Remembers that `bytes` verified under `markKey` and name `storeID`.
  func remember(_ bytes: [UInt8], markKey: [UInt8], storeID: [UInt8]) {
    verified.withLock { $0 = Verified(bytes: bytes, markKey: markKey, storeID: storeID) }
  }
}

extension FileClockMarkStore {
  /// ``observe(resolution:readingClocks:)`` of a sealed store: from the second operation of a
  /// store value on, an observation that needs no durable write reads the record through the
  /// descriptors kept open (the unsealed store's `KeptMarkHandles`, with every check of
  /// `checkKept(_:)`), under `flock(LOCK_SH | LOCK_NB)` so that no write is in flight, verifies
  /// both slots' seals with the operation's key (`checkSeals`; not again for bytes this store
  /// value verified before with the same key: ``SealedMarkMemo``), and reads the clocks after
  /// it. Everything else takes the full locked path, which reports every problem as before: the
  /// first operation, a write that is needed (a rise of at least `resolution`), a record of
  /// another machine, a writer holding the lock, a check or a seal that fails, a key that cannot
  /// be had.
  ///
  /// - Complexity: Without a write: `lstat`, 2 `fstatat`, `geteuid`, 2 `flock`, one `pread` of
  ///   the record, a comparison of its bytes (two MACs when they changed).
  func observeSealed(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition
  {
    if resolution > .zero, let files = keptHandles(allowingSealed: true),
      let verified = sealedKeptRecord(files)
    {
      let observation = clocks()
      let next = verified.record.observing(observation)
      if verified.record.machineRefusal(for: observation) == nil,
        !verified.record.needsWrite(becoming: next, resolution: resolution)
      {
        return ClockMarkTransition(
          previous: verified.record, current: next, wrote: false, observation: observation,
          sealedStoreID: verified.storeID)
      }
    }
    let transition = try observeUnderLock(resolution: resolution, readingClocks: clocks)
    noteOperation()
    return transition
  }

  /// The record read through the kept descriptors, with the store id its verified seals name,
  /// or `nil` (take the locked path).
  private func sealedKeptRecord(_ files: KeptMarkHandles)
    -> (record: ClockMarkRecord, storeID: [UInt8])?
  {
    guard let keys = try? sealKeys(creating: false) else { return nil }
    guard checkKept(files), let lock = files.takeLock() else {
      dropKeptFiles(files)
      return nil
    }
    do {
      try system.flock(lock, LockOperation.shared.nonBlocking)
    } catch {
      files.giveBack(lock)
      return nil
    }
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    let count = try? system.preadAll(files.record, into: &bytes, at: 0)
    files.unlockAndGiveBack(lock)
    guard count == MarkRecordCodec.fileSize,
      let loaded = try? Self.newest(in: bytes, fd: files.record)
    else { return nil }
    if let storeID = sealedMemo.storeID(of: bytes, markKey: keys.mark) {
      return (loaded.record, storeID)
    }
    guard let seal = try? checkSeals(bytes, creatingKey: false) else { return nil }
    sealedMemo.remember(bytes, markKey: seal.keys.mark, storeID: seal.storeID)
    return (loaded.record, seal.storeID)
  }
}
