/// The record a ``FileClockMarkStore`` read before taking the lock
/// (``FileClockMarkStore/recordBeforeLock(validating:)``).
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
  /// How an observation continues under the exclusive lock, given what it read before the lock
  /// and the record (and its sequence) just loaded under it: the group commit of
  /// ``observe(resolution:readingClocks:)``.
  func settle(_ pending: PendingObservation, stored: ClockMarkRecord, sequence: UInt64?)
    -> LockedObservationStart
  {
    guard let sequence else { return .readClocks }
    if sequence == pending.hint.sequence, stored == pending.hint.record {
      // Nothing was written since the read before the lock: those clocks were read after the
      // stored mark.
      return .observed(pending.observation)
    }
    if sequence > pending.hint.sequence, stored.covers(pending.next) {
      // Another observation wrote at least this much, and it is durable (read under the lock).
      return .covered(
        ClockMarkTransition(
          previous: pending.hint.record, current: pending.next, wrote: false,
          observation: pending.observation, coveringRecord: stored))
    }
    if sequence < pending.hint.sequence {
      // The kept descriptor reads a file that is no longer the record (replaced).
      dropKeptFiles()
    }
    return .readClocks
  }
}
