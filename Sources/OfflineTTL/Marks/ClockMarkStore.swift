/// Where a cache's clock mark record lives: a Sendable backend behind one protocol.
///
/// A new backend usually conforms to ``ClockMarkStorage`` instead, supplying only a lock, a load
/// and writes: the state machine (observe, create the first mark, reset) is then the shared one
/// that the file, in-memory and Secret Service stores use.
///
/// Every implementation must guarantee (<doc:Rules#Clock-mark>, <doc:Rules#Fail-closed>, <doc:Rules#Durable-and-private-storage>), and must pass the shared
/// conformance suite in `OfflineTTLTesting`:
/// 1. **Atomic read → advance → write.** ``observe(resolution:readingClocks:)``,
///    ``createFirstMark(readingClocks:)`` and ``resetAfterOnlineSignIn(readingClocks:)`` are each atomic with respect to every thread *and process*
///    using the same store. Two observers never overwrite a higher mark with a lower one, and an
///    online sign-in's reset is never undone by a writer that read the record before it.
/// 2. **Durable before return.** When an operation returns, its record survives a crash or power
///    loss. A crash at any instant leaves the old or the new record, never half of one.
/// 3. **Monotone.** The mark never decreases except through ``resetAfterOnlineSignIn(readingClocks:)``.
/// 4. **Fail closed, keep the evidence.** An absent record is ``StoreError/Code/absent``
///    and ``observe(resolution:readingClocks:)`` creates nothing. An unreadable record is
///    ``StoreError/Code/unreadable`` and its bytes are left exactly as they were; only
///    ``resetAfterOnlineSignIn(readingClocks:)`` replaces them. A failed write leaves the old record intact.
/// 5. **Errors are typed**: every failure is a ``StoreError``.
public protocol ClockMarkStore: Sendable {
  /// The current record, writing nothing.
  ///
  /// - Returns: The stored record.
  /// - Throws: ``StoreError``: `absent`, `unreadable` (with why), or an I/O failure.
  func read() throws(StoreError) -> ClockMarkRecord

  /// Reads the clocks *while holding the store's lock*, then advances the mark to
  /// `max(stored, observation.wall)` and carries the floor forward, durably, as one atomic step.
  /// Skips the write when the rise is below `resolution` (see
  /// ``ClockMarkRecord/needsWrite(becoming:resolution:)``).
  ///
  /// Reading the clocks under the lock is what keeps concurrent observers honest: clocks read
  /// *before* waiting for the lock can be older than a record another process wrote meanwhile,
  /// which would look like a rollback (`clock_behind_mark`) or like a boot clock going backward
  /// (and mark the floor untrusted) although no clock moved.
  ///
  /// - Parameters:
  ///   - resolution: The smallest rise of the mark (or of the floor) worth a durable write
  ///     (``EligibilityPolicy/markResolution``); zero or less writes every rise.
  ///   - clocks: Reads the clocks now (usually ``Clocks/readForDecision()``); called exactly
  ///     once, under the lock, after the stored record was read, and not at all when it is
  ///     absent or unreadable.
  /// - Returns: The record before and after (equal to what is stored when this returns), and the
  ///   observation that was used.
  /// - Throws: ``StoreError``: `absent` (nothing is created), `unreadable` (bytes left
  ///   alone), `writeFailed` (old record intact), or a lock or I/O failure.
  func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition

  /// Creates the first record (generation 0) at the wall reading when none exists, for the
  /// gate's trust-on-first-use step, reading the clocks under the lock. An existing record,
  /// readable or not, is left untouched.
  ///
  /// - Parameter clocks: Reads the clocks now; called at most once, under the lock, and only
  ///   when no record exists (so the caller knows it created the record exactly when it was
  ///   called).
  /// - Returns: The record now stored (the new one, or the existing one unchanged).
  /// - Throws: ``StoreError``: `unreadable` when a record exists but cannot be read
  ///   (it is not replaced), `writeFailed`, or a lock or I/O failure.
  func createFirstMark(readingClocks clocks: () -> ClockObservation) throws(StoreError)
    -> ClockMarkRecord

  /// Writes the record an online sign-in earns, reading the clocks under the lock: generation
  /// + 1, mark = the wall reading even when lower than the stored mark, floor re-anchored. Works
  /// over an absent or unreadable record (each implementation documents which generation it
  /// writes then). Called as the commit point of an item store's sign-in
  /// (``DirectoryCacheStore``), the record carries that sign-in's id
  /// (``ClockMarkRecord/signInID``); called otherwise, none.
  ///
  /// - Parameter clocks: Reads the clocks now (usually ``Clocks/readForSignIn()``); called
  ///   exactly once, under the lock, unless the lock cannot be taken.
  /// - Returns: The new record.
  /// - Throws: ``StoreError``: `writeFailed` (old bytes intact), or a lock or I/O
  ///   failure.
  func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkRecord

  /// Checks, writing nothing, what would make ``resetAfterOnlineSignIn(readingClocks:)`` fail
  /// in a way no online sign-in repairs (for the file store: a store directory or lock file that
  /// another user owns or that group or others may write), so that a sign-in refuses before it
  /// stages anything. What the reset repairs (a missing record or lock, one of the wrong type,
  /// an unreadable record, a record with another name, owner or mode) passes. The default does
  /// nothing.
  ///
  /// - Throws: ``StoreError``: `insecure_store` naming the path.
  /// - Complexity: O(1): a few opens and `fstat`s, no lock taken.
  func checkBeforeOnlineSignIn() throws(StoreError)

  /// The stored generation as an online sign-in hands it to
  /// ``CacheItemStore/commitSignIn(preparing:storedGeneration:commitPoint:)``, under the item
  /// store's writer exclusion: `nil` when the record is absent or cannot be trusted (the
  /// sign-in's reset replaces it); a lock that another holder kept past the store's limit is
  /// thrown (`lock_timed_out`). The default reads it with ``read()``.
  ///
  /// - Returns: The stored generation, or `nil`.
  /// - Throws: ``StoreError`` `lock_timed_out`.
  func generationForSignIn() throws(StoreError) -> UInt64?
}

extension ClockMarkStore {
  /// The default: nothing to check (a store whose reset refuses nothing it cannot repair).
  public func checkBeforeOnlineSignIn() throws(StoreError) {}

  /// The default: ``read()``'s generation; `nil` when the record could be looked at and is
  /// absent or cannot be trusted (the sign-in's reset replaces it); a lock that another holder
  /// kept past the store's limit (`lock_timed_out`) is thrown. The record was not looked at
  /// then, and `nil` would let an item store remove a committed sign-in's staging, serving the
  /// items it replaced.
  ///
  /// - Returns: The stored generation, or `nil`.
  /// - Throws: ``StoreError`` `lock_timed_out`.
  /// - Complexity: As ``read()``.
  public func generationForSignIn() throws(StoreError) -> UInt64? {
    do {
      return try read().generation
    } catch  where error.code == .lockTimedOut {
      throw error
    } catch {
      return nil
    }
  }

  /// ``observe(resolution:readingClocks:)`` writing every rise.
  ///
  /// - Parameter clocks: Reads the clocks now, under the lock.
  /// - Returns: As ``observe(resolution:readingClocks:)``.
  /// - Throws: As ``observe(resolution:readingClocks:)``.
  public func observe(readingClocks clocks: () -> ClockObservation) throws(StoreError)
    -> ClockMarkTransition
  {
    try observe(resolution: .zero, readingClocks: clocks)
  }

  /// ``observe(resolution:readingClocks:)`` with clocks already read (the command line's
  /// `mark observe`, tests). Clocks read before the lock can be older than the stored mark: the
  /// gate never uses this form.
  ///
  /// - Parameters:
  ///   - observation: The clocks, read by the caller.
  ///   - resolution: The smallest rise worth a write; zero (the default) writes every rise.
  /// - Returns: As ``observe(resolution:readingClocks:)``.
  /// - Throws: As ``observe(resolution:readingClocks:)``.
  public func observe(_ observation: ClockObservation, resolution: Duration = .zero)
    throws(StoreError) -> ClockMarkTransition
  {
    try observe(resolution: resolution, readingClocks: { observation })
  }

  /// ``observe(_:resolution:)`` with only a wall-clock reading, writing every rise.
  public func observe(now: WallClockInstant) throws(StoreError) -> ClockMarkTransition {
    try observe(ClockObservation(wall: now))
  }

  /// ``resetAfterOnlineSignIn(readingClocks:)`` with clocks already read.
  public func resetAfterOnlineSignIn(_ observation: ClockObservation) throws(StoreError)
    -> ClockMarkRecord
  {
    try resetAfterOnlineSignIn(readingClocks: { observation })
  }

  /// ``resetAfterOnlineSignIn(readingClocks:)`` with only a wall-clock reading.
  public func resetAfterOnlineSignIn(now: WallClockInstant) throws(StoreError)
    -> ClockMarkRecord
  {
    try resetAfterOnlineSignIn(ClockObservation(wall: now))
  }

  /// ``createFirstMark(readingClocks:)`` with clocks already read.
  public func createFirstMark(_ observation: ClockObservation) throws(StoreError)
    -> ClockMarkRecord
  {
    try createFirstMark(readingClocks: { observation })
  }

  /// ``createFirstMark(_:)`` with only a wall-clock reading.
  public func createFirstMark(now: WallClockInstant) throws(StoreError) -> ClockMarkRecord {
    try createFirstMark(ClockObservation(wall: now))
  }
}

/// The record before and after one observation.
public struct ClockMarkTransition: Sendable, Hashable {
  /// The record this observation was judged against, read before its clocks: under the lock,
  /// or, when ``coveringRecord`` is set, just before the lock was taken (group commit).
  public let previous: ClockMarkRecord
  /// The record after it; this is what is stored (or, when the write was skipped under the
  /// mark resolution, what the stored record implies).
  public let current: ClockMarkRecord
  /// Whether this observation wrote to storage. `false` also when a concurrent observation's
  /// write already made a record at least as high durable (``coveringRecord``).
  public let wrote: Bool
  /// The clocks this observation used, read after ``previous`` (under the store's lock, or after
  /// a read of the record that the lock found unchanged or covered).
  public let observation: ClockObservation
  /// The store id carried by the verified seals of the record read under the lock (a sealed
  /// ``FileClockMarkStore``), else `nil`: what a sealed item store's binding is confirmed
  /// against (``MarkBinding/isConfirmed(by:)``).
  public let sealedStoreID: [UInt8]?
  /// The durable record that made this observation's write unnecessary (group commit: read under
  /// the lock after another observation wrote it; it ``ClockMarkRecord/covers(_:)`` ``current``),
  /// else `nil`.
  public let coveringRecord: ClockMarkRecord?

  /// The mark actually stored after this observation: ``current``'s when it was written, the
  /// covering record's when a concurrent write covered it, else ``previous``'s (a rise below the
  /// mark resolution is decided on but not written).
  public var storedMark: WallClockInstant {
    if let coveringRecord { return coveringRecord.mark }
    return wrote ? current.mark : previous.mark
  }

  /// Creates a transition.
  ///
  /// - Parameters:
  ///   - previous: The record before the observation.
  ///   - current: The record after it.
  ///   - wrote: Whether the observation wrote to storage.
  ///   - observation: The clocks it used.
  ///   - sealedStoreID: The sealed record's store id, `nil` for an unsealed store.
  ///   - coveringRecord: The durable record whose write covered this observation, or `nil`.
  public init(
    previous: ClockMarkRecord, current: ClockMarkRecord, wrote: Bool,
    observation: ClockObservation, sealedStoreID: [UInt8]? = nil,
    coveringRecord: ClockMarkRecord? = nil
  ) {
    self.coveringRecord = coveringRecord
    self.previous = previous
    self.current = current
    self.wrote = wrote
    self.observation = observation
    self.sealedStoreID = sealedStoreID
  }
}
