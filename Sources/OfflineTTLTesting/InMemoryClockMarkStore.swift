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
public final class InMemoryClockMarkStore: ClockMarkStore {
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

  struct State {
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

  private let state: Mutex<State>

  /// Creates a store.
  ///
  /// - Parameter stored: The initial state; default absent.
  public init(_ stored: StoredState = .absent) {
    state = Mutex(State(stored: stored))
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

  /// Advances the mark with `ClockMarkRecord/observing(_:)`, writing only when
  /// `ClockMarkRecord/needsWrite(becoming:resolution:)` says so.
  ///
  /// - Parameters:
  ///   - resolution: The smallest rise worth a write; zero writes every rise.
  ///   - clocks: Reads the clocks; called once, under the store's mutex, after the record was
  ///     read.
  /// - Returns: The record before and after, and the observation used.
  /// - Throws: An injected error, `absent` (nothing is created), or `unreadable`.
  public func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkTransition
  {
    try state.withLock { state throws(StoreError) in
      if let error = state.failure(for: .observe) { throw error }
      let previous = try Self.record(in: state.stored)
      let observation = clocks()
      let next = previous.observing(observation)
      guard previous.needsWrite(becoming: next, resolution: resolution) else {
        return ClockMarkTransition(
          previous: previous, current: next, wrote: false, observation: observation)
      }
      if let error = state.failure(for: .observeWrite) { throw error }
      assert(next.mark >= previous.mark, "an observation lowered the mark")
      state.stored = .record(next)
      state.writes += 1
      return ClockMarkTransition(
        previous: previous, current: next, wrote: true, observation: observation)
    }
  }

  /// Creates generation 0 at the wall reading when absent; leaves an existing record alone.
  ///
  /// - Parameter clocks: Reads the clocks; called under the mutex, only when no record exists.
  /// - Returns: The record now stored.
  /// - Throws: An injected error, or `unreadable` (the record is not replaced).
  public func createFirstMark(readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkRecord
  {
    try state.withLock { state throws(StoreError) in
      if let error = state.failure(for: .createFirstMark) { throw error }
      switch state.stored {
      case .record(let existing):
        return existing
      case .unreadable:
        return try Self.record(in: state.stored)
      case .absent:
        let first = ClockMarkRecord.afterOnlineSignIn(generation: 0, at: clocks())
        state.stored = .record(first)
        state.writes += 1
        return first
      }
    }
  }

  /// Writes generation + 1 (1 over an absent or unreadable record) with mark = the wall reading.
  ///
  /// - Parameter clocks: Reads the clocks; called once, under the mutex.
  /// - Returns: The new record.
  /// - Throws: An injected error (the old state stays).
  public func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
    throws(StoreError) -> ClockMarkRecord
  {
    try state.withLock { state throws(StoreError) in
      if let error = state.failure(for: .reset) { throw error }
      let observation = clocks()
      let generation: UInt64
      if case .record(let old) = state.stored {
        generation = ClockMarkRecord.generation(after: old.generation)
      } else {
        generation = 1
      }
      let record = ClockMarkRecord.afterOnlineSignIn(generation: generation, at: observation)
      state.stored = .record(record)
      state.writes += 1
      return record
    }
  }

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
