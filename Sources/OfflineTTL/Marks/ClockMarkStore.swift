/// Where a cache's clock mark record lives: a Sendable backend behind one protocol.
///
/// Every implementation must guarantee (<doc:Rules#Clock-mark>, <doc:Rules#Fail-closed>, <doc:Rules#Durable-and-private-storage>), and must pass the shared
/// conformance suite in `OfflineTTLTesting`:
/// 1. **Atomic read → advance → write.** ``observe(_:)``, ``createFirstMark(_:)`` and
///    ``resetAfterOnlineSignIn(_:)`` are each atomic with respect to every thread *and process*
///    using the same store. Two observers never overwrite a higher mark with a lower one, and an
///    online sign-in's reset is never undone by a writer that read the record before it.
/// 2. **Durable before return.** When an operation returns, its record survives a crash or power
///    loss. A crash at any instant leaves the old or the new record, never half of one.
/// 3. **Monotone.** The mark never decreases except through ``resetAfterOnlineSignIn(_:)``.
/// 4. **Fail closed, keep the evidence.** An absent record is ``StoreError/Code/absent``
///    and ``observe(_:)`` creates nothing. An unreadable record is
///    ``StoreError/Code/unreadable`` and its bytes are left exactly as they were; only
///    ``resetAfterOnlineSignIn(_:)`` replaces them. A failed write leaves the old record intact.
/// 5. **Errors are typed**: every failure is a ``StoreError``.
public protocol ClockMarkStore: Sendable {
  /// The current record, writing nothing.
  ///
  /// - Returns: The stored record.
  /// - Throws: ``StoreError``: `absent`, `unreadable` (with why), or an I/O failure.
  func read() throws(StoreError) -> ClockMarkRecord

  /// Reads the clocks *while holding the store's lock*, then advances the mark to
  /// `max(stored, observation.wall)` and carries the floor forward, durably, as one atomic step.
  /// May skip the write when the rise is below `observation.markResolution` (see
  /// ``ClockMarkRecord/needsWrite(becoming:resolution:)``).
  ///
  /// Reading the clocks under the lock is what keeps concurrent observers honest: clocks read
  /// *before* waiting for the lock can be older than a record another process wrote meanwhile,
  /// which would look like a rollback (`clock_behind_mark`) or like a boot clock going backward
  /// (and mark the floor untrusted) although no clock moved.
  ///
  /// - Parameter clocks: Reads the clocks now; called exactly once, under the lock, after the
  ///   stored record was read, and not at all when it is absent or unreadable.
  /// - Returns: The record before and after (equal to what is stored when this returns), and the
  ///   observation that was used.
  /// - Throws: ``StoreError``: `absent` (nothing is created), `unreadable` (bytes left
  ///   alone), `writeFailed` (old record intact), or a lock or I/O failure.
  func observe(readingClocks clocks: () -> ClockObservation) throws(StoreError)
    -> ClockMarkTransition

  /// Creates the first record (generation 0) at `observation.wall` when none exists, for the
  /// gate's trust-on-first-use option. An existing record, readable or not, is left untouched.
  ///
  /// - Parameter observation: The clocks now.
  /// - Returns: The record now stored (the new one, or the existing one unchanged).
  /// - Throws: ``StoreError``: `unreadable` when a record exists but cannot be read
  ///   (it is not replaced), `writeFailed`, or a lock or I/O failure.
  func createFirstMark(_ observation: ClockObservation) throws(StoreError)
    -> ClockMarkRecord

  /// Writes the record an online sign-in earns: generation + 1, mark = `observation.wall` even
  /// when lower than the stored mark, floor re-anchored. Works over an absent or unreadable
  /// record (each implementation documents which generation it writes then).
  ///
  /// - Parameter observation: The clocks now.
  /// - Returns: The new record.
  /// - Throws: ``StoreError``: `writeFailed` (old bytes intact), or a lock or I/O
  ///   failure.
  func resetAfterOnlineSignIn(_ observation: ClockObservation) throws(StoreError)
    -> ClockMarkRecord
}

extension ClockMarkStore {
  /// ``observe(readingClocks:)`` with clocks already read (the command line's `mark observe`, tests).
  ///
  /// - Parameter observation: The clocks, read by the caller.
  /// - Returns: As ``observe(readingClocks:)``.
  /// - Throws: As ``observe(readingClocks:)``.
  public func observe(_ observation: ClockObservation) throws(StoreError)
    -> ClockMarkTransition
  {
    try observe(readingClocks: { observation })
  }

  /// ``observe(_:)`` with only a wall-clock reading, writing every rise.
  public func observe(now: WallClockInstant) throws(StoreError) -> ClockMarkTransition {
    try observe(ClockObservation(wall: now))
  }

  /// ``resetAfterOnlineSignIn(_:)`` with only a wall-clock reading.
  public func resetAfterOnlineSignIn(now: WallClockInstant) throws(StoreError)
    -> ClockMarkRecord
  {
    try resetAfterOnlineSignIn(ClockObservation(wall: now))
  }

  /// ``createFirstMark(_:)`` with only a wall-clock reading.
  public func createFirstMark(now: WallClockInstant) throws(StoreError) -> ClockMarkRecord {
    try createFirstMark(ClockObservation(wall: now))
  }
}

/// The record before and after one observation.
public struct ClockMarkTransition: Sendable, Hashable {
  /// The record read under the lock, before this observation.
  public let previous: ClockMarkRecord
  /// The record after it; this is what is stored (or, when the write was skipped under the
  /// mark resolution, what the stored record implies).
  public let current: ClockMarkRecord
  /// Whether this observation wrote to storage.
  public let wrote: Bool
  /// The clocks this observation used (read under the store's lock).
  public let observation: ClockObservation

  /// The mark actually stored after this observation: ``current``'s when it was written, else
  /// ``previous``'s (a rise below the mark resolution is decided on but not written).
  public var storedMark: WallClockInstant { wrote ? current.mark : previous.mark }

  /// Creates a transition.
  public init(
    previous: ClockMarkRecord, current: ClockMarkRecord, wrote: Bool,
    observation: ClockObservation
  ) {
    self.previous = previous
    self.current = current
    self.wrote = wrote
    self.observation = observation
  }
}
