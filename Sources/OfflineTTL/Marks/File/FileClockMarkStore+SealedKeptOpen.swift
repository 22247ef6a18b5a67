import Synchronization

/// The last record a sealed ``FileClockMarkStore`` value's kept read verified (its sequence and
/// value), with the subkeys that verified both slots' seals and the store id they name.
/// The kept read (`validatedKeptRecord(_:)`) returns a record only after `checkSeals` verified
/// it with the operation's key, or, while its change watch reports nothing, the very record it
/// verified last; this memo gives that record's store id back, and tells whether the key that
/// verified it is the key of the operation asking. Shared by every copy of one store value.
final class SealedMarkMemo: Sendable {
  /// One verified record (immutable: handed out of the lock with one reference count).
  private final class Verified: Sendable {
    let sequence: UInt64
    let record: ClockMarkRecord
    let keys: SealKeys
    let storeID: [UInt8]

    init(sequence: UInt64, record: ClockMarkRecord, keys: SealKeys, storeID: [UInt8]) {
      self.sequence = sequence
      self.record = record
      self.keys = keys
      self.storeID = storeID
    }
  }

  private let verified = Mutex<Verified?>(nil)

  /// The store id verified for `record` (of sequence `sequence`) under `keys`, or `nil`.
  ///
  /// - Complexity: O(1): a comparison of the record and of the subkeys (by reference; in
  ///   constant time for two sets derived apart, ``SealKeys/isSame(as:)``).
  func storeID(of record: ClockMarkRecord, sequence: UInt64, keys: SealKeys) -> [UInt8]? {
    guard let verified = verified.withLock({ $0 }), verified.sequence == sequence,
      verified.keys.isSame(as: keys), verified.record == record
    else { return nil }
    return verified.storeID
  }

  /// Remembers that `record` (of sequence `sequence`) verified under `keys` and names
  /// `storeID`.
  func remember(_ record: ClockMarkRecord, sequence: UInt64, keys: SealKeys, storeID: [UInt8]) {
    let verified = Verified(sequence: sequence, record: record, keys: keys, storeID: storeID)
    self.verified.withLock { $0 = verified }
  }
}

extension FileClockMarkStore {
  /// ``observe(resolution:readingClocks:)`` of a sealed store: from the second operation of a
  /// store value on, an observation that needs no durable write takes the unsealed store's kept
  /// read (`validatedKeptRecord(_:)`: every check of the kept files and a non-blocking shared
  /// lock, both slots' seals verified with the operation's key; or, on a local file system,
  /// that record reused while the change watch reports nothing), then reads the clocks. The
  /// record is used only when the key that verified its seals is this operation's key
  /// (``SealedMarkMemo``); the observation then carries the store id the seals name. Everything
  /// else takes the full locked path, which reports every problem as before: the first
  /// operation, a write that is needed (a rise of at least `resolution`), a record of another
  /// machine, a writer holding the lock, a check or a seal that fails, another key, a key that
  /// cannot be had.
  ///
  /// - Complexity: Without a write, with the watch and no change: one `read`, one `lstat`, one
  ///   `geteuid`. After a change: `lstat`, 2 `fstatat`, 2 `flock`, one `pread` and two MACs.
  func observeSealed(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition
  {
    if resolution > .zero, let (hint, storeID) = keptSealedRecord() {
      let observation = clocks()
      let next = hint.record.observing(observation)
      if hint.record.machineRefusal(for: observation) == nil,
        !hint.record.needsWrite(becoming: next, resolution: resolution)
      {
        return ClockMarkTransition(
          previous: hint.record, current: next, wrote: false, observation: observation,
          sealedStoreID: storeID)
      }
    }
    let transition = try observeUnderLock(resolution: resolution, readingClocks: clocks)
    noteOperation()
    return transition
  }

  /// The record a sealed store's kept read verified (`validatedKeptRecord(_:)`, on the kept
  /// descriptors) with the store id its seals name, when the key that verified it is this
  /// operation's key (``SealedMarkMemo``); `nil` sends the caller to the full locked path,
  /// which reports whatever is wrong: the first operation of a store value, a key that cannot
  /// be had or was replaced, a check or a seal that fails, a writer holding the lock.
  /// Shared by the observation without a write (`observeSealed`) and ``read()``.
  ///
  /// - Complexity: With the watch and no change: one `poll`, one `geteuid`, and the key's own
  ///   check (``SealingKeyScope``). After a change: `lstat`, 2 `fstatat`, 2 `flock`, one `pread`
  ///   and two MACs.
  func keptSealedRecord() -> (hint: RecordHint, storeID: [UInt8])? {
    guard let keys = try? sealKeys(creating: false),
      let files = keptHandles(allowingSealed: true), let hint = validatedKeptRecord(files),
      let storeID = sealedMemo.storeID(of: hint.record, sequence: hint.sequence, keys: keys)
    else { return nil }
    return (hint, storeID)
  }
}
