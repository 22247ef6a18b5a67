import OfflineTTL
import Synchronization

/// A `ClockMarkStore` in memory, for tests of code that uses a store (the gate, the command
/// line). Same semantics as the file store: it advances with the shared pure functions
/// (`ClockMarkRecord/observing(_:)`, `ClockMarkRecord/needsWrite(becoming:resolution:)`,
/// `ClockMarkRecord/afterOnlineSignIn(generation:at:)`), so every backend advances identically;
/// and it can be put in any state (absent, unreadable) or told to fail an operation with a given
/// error. Safe to share across threads: every operation holds one `Mutex` for its whole
/// read → advance → write (it serializes threads, not processes; nothing here is durable).
///
/// Over an absent or unreadable record, ``resetAfterOnlineSignIn(_:)`` writes generation 1 (an
/// unreadable state here keeps no generation to continue from).
public final class InMemoryClockMarkStore: ClockMarkStorage {
  /// What the store holds.
  public enum StoredState: Sendable, Hashable {
    /// No record.
    case absent
    /// A record that cannot be read, and why.
    case unreadable(StoreError.UnreadableReason)
    /// A readable record.
    case record(ClockMarkRecord)
  }

  /// The operations that can be told to fail.
  public enum Operation: Sendable, Hashable, CaseIterable {
    /// `ClockMarkStore/read()`.
    case read
    /// `ClockMarkStore/observe(_:)` (all of it, before anything is read).
    case observe
    /// `ClockMarkStore/observe(_:)`'s write, after reading: the old record stays.
    case observeWrite
    /// `ClockMarkStore/createFirstMark(_:)`.
    case createFirstMark
    /// `ClockMarkStore/resetAfterOnlineSignIn(_:)`.
    case reset
  }

  /// The store's state, held under its mutex for one whole operation (the lock of the shared
  /// state machine).
  public struct Access: Sendable {
    var stored: StoredState
    var persistentFailures: [Operation: StoreError] = [:]
    var oneShotFailures: [Operation: [StoreError]] = [:]
    var writes = 0

    mutating func failure(for operation: Operation) -> StoreError? {
      if var queue = oneShotFailures[operation], !queue.isEmpty {
        let error = queue.removeFirst()
        oneShotFailures[operation] = queue
        return error
      }
      return persistentFailures[operation]
    }
  }

  private let state: Mutex<Access>

  /// Creates a store.
  ///
  /// - Parameter stored: The initial state; default absent.
  public init(_ stored: StoredState = .absent) {
    state = Mutex(Access(stored: stored))
  }

  /// Creates a store holding `record`.
  ///
  /// - Parameter record: The initial record.
  public convenience init(record: ClockMarkRecord) {
    self.init(.record(record))
  }

  /// What the store holds now.
  public var stored: StoredState { state.withLock { $0.stored } }

  /// How many writes (observations that wrote, first marks, resets) have happened.
  public var writeCount: Int { state.withLock { $0.writes } }

  /// Replaces what the store holds (to simulate a corrupt or deleted record). Not a write: it
  /// does not count in ``writeCount``.
  ///
  /// - Parameter stored: The new state.
  public func setStored(_ stored: StoredState) { state.withLock { $0.stored = stored } }

  /// Makes every later call of `operation` fail with `error`, until cleared with `nil`.
  ///
  /// - Parameters:
  ///   - error: The error to throw, or `nil` to stop failing.
  ///   - operation: Which operation fails.
  public func setFailure(_ error: StoreError?, for operation: Operation) {
    state.withLock { $0.persistentFailures[operation] = error }
  }

  /// Makes the next call of `operation` fail with `error` (queued after earlier one-shot
  /// failures of the same operation); later calls behave normally.
  ///
  /// - Parameters:
  ///   - operation: Which operation fails.
  ///   - error: The error to throw.
  public func failNext(_ operation: Operation, with error: StoreError) {
    state.withLock { $0.oneShotFailures[operation, default: []].append(error) }
  }

  /// The current record, writing nothing.
  ///
  /// - Returns: The stored record.
  /// - Throws: An injected error, `absent`, or `unreadable`.
  public func read() throws(StoreError) -> ClockMarkRecord {
    try state.withLock { state throws(StoreError) in
      if let error = state.failure(for: .read) { throw error }
      return try Self.record(in: state.stored)
    }
  }

  // observe(readingClocks:), createFirstMark(_:) and resetAfterOnlineSignIn(_:) are the shared
  // state machine of `ClockMarkStorage`; the primitives follow.

  /// Holds the store's mutex for the whole operation; an injected failure of `operation` is
  /// thrown before anything is read.
  public func withExclusiveAccess<Result>(
    for operation: ClockMarkStorageOperation,
    _ body: (inout Access) throws(StoreError) -> Result
  ) throws(StoreError) -> Result {
    try state.withLock { state throws(StoreError) in
      let injected: Operation =
        switch operation {
        case .observe: .observe
        case .createFirstMark: .createFirstMark
        case .reset: .reset
        }
      if let error = state.failure(for: injected) { throw error }
      return try body(&state)
    }
  }

  /// The stored record, or `absent` / `unreadable`.
  public func loadRecord(in access: inout Access, forWriting: Bool) throws(StoreError)
    -> ClockMarkRecord
  {
    try Self.record(in: access.stored)
  }

  /// Stores an observed record; an injected `observeWrite` failure keeps the old one.
  public func writeObserved(_ record: ClockMarkRecord, in access: inout Access)
    throws(StoreError)
  {
    if let error = access.failure(for: .observeWrite) { throw error }
    access.stored = .record(record)
    access.writes += 1
  }

  /// Stores the first record.
  public func writeFirst(_ record: ClockMarkRecord, in access: inout Access) throws(StoreError) {
    access.stored = .record(record)
    access.writes += 1
  }

  /// Stores a reset record over whatever was there.
  public func writeReset(
    _ record: ClockMarkRecord, in access: inout Access, overLoadedRecord: Bool
  ) throws(StoreError) {
    access.stored = .record(record)
    access.writes += 1
  }

  /// `nil`: an unreadable state here keeps no generation to continue from.
  public func salvagedGeneration(in access: inout Access) -> UInt64? { nil }

  private static func record(in stored: StoredState) throws(StoreError)
    -> ClockMarkRecord
  {
    switch stored {
    case .record(let record):
      return record
    case .absent:
      throw StoreError(code: .absent, message: "no clock mark record exists")
    case .unreadable(let why):
      throw StoreError(
        code: .unreadable, unreadableReason: why, message: "the clock mark record is unreadable")
    }
  }
}
