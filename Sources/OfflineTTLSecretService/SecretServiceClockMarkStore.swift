#if SecretService
  import OfflineTTL

  /// A ``ClockMarkStore`` that keeps the clock mark record as a secret in the Secret Service
  /// (GNOME Keyring, KWallet, KeePassXC: the Linux counterpart of the Keychain), through libsecret.
  ///
  /// The record is one secret in the `default` collection with the attributes
  /// `application` = ``SecretServiceStoreConfiguration/applicationID``, `kind` = `clock-mark`,
  /// `key` = `mark`. Its value holds the exact record as text with a CRC-32 (the daemon's own
  /// `modified` time has 1-second resolution and follows the daemon's clock: it is not used).
  ///
  /// - Atomicity: ``observe(_:)``, ``createFirstMark(_:)`` and ``resetAfterOnlineSignIn(_:)`` hold
  ///   an `flock` on a lock file in ``SecretServiceStoreConfiguration/lockDirectory`` around their
  ///   read → advance → write, so every thread and process using the same application id and lock
  ///   directory is serialized. The advance is the shared ``ClockMarkRecord/observing(_:)`` and
  ///   ``ClockMarkRecord/needsWrite(becoming:resolution:)``, exactly as in the file store.
  /// - Durability: the provider replaces a secret whole and writes its collection to disk before
  ///   answering (GNOME Keyring rewrites the keyring file through a temporary file and rename).
  /// - Fail closed: every failure is a ``StoreError``. Service failures have code
  ///   `storeUnusable` (or `writeFailed` for a failed write) and a ``StoreUnusableReason``:
  ///   `no_session_bus`, `no_provider`, `collection_locked` (no unlock prompt unless
  ///   ``SecretServiceStoreConfiguration/allowsUnlockPrompt``), `collection_missing`,
  ///   `timed_out`. A missing secret is `absent`; one that does not decode, or two secrets with
  ///   the same attributes, is `unreadable` and left alone. Nothing is deleted on any failure.
  /// - Time limit: each operation is bounded by ``SecretServiceStoreConfiguration/timeout``.
  public struct SecretServiceClockMarkStore: ClockMarkStore {
    /// Where the record lives and how operations are bounded.
    public let configuration: SecretServiceStoreConfiguration

    static let kind = "clock-mark"
    static let key = "mark"

    /// Creates a store; connects lazily, once per operation.
    ///
    /// - Parameter configuration: The application id, lock directory, prompt policy and timeout.
    public init(configuration: SecretServiceStoreConfiguration) {
      self.configuration = configuration
    }

    /// The stored record, writing nothing and taking no lock (a secret is replaced whole).
    ///
    /// - Returns: The stored record.
    /// - Throws: ``StoreError``: `absent`, `unreadable`, or `storeUnusable`.
    public func read() throws(StoreError) -> ClockMarkRecord {
      try run(locked: false) { session throws(StoreError) in
        guard let found = try Self.findRecord(session) else { throw Self.absent() }
        return try Self.decode(found)
      }
    }

    /// Advances the mark to `max(stored, observation.wall)` under the lock file, writing only when
    /// ``ClockMarkRecord/needsWrite(becoming:resolution:)`` says so.
    ///
    /// - Parameters:
    ///   - resolution: The smallest rise worth a write; zero writes every rise.
    ///   - clocks: Reads the clocks; called once, under the lock file, after the record was
    ///     read.
    /// - Returns: The record before and after, and the observation used.
    /// - Throws: ``StoreError``: `absent` (nothing is created), `unreadable` (left
    ///   alone), `writeFailed`, `lockFailed`, or `storeUnusable`.
    public func observe(resolution: Duration, readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkTransition
    {
      try run(locked: true) { session throws(StoreError) in
        guard let found = try Self.findRecord(session) else { throw Self.absent() }
        let previous = try Self.decode(found)
        let observation = clocks()
        let next = previous.observing(observation)
        let wrote = previous.needsWrite(becoming: next, resolution: resolution)
        if wrote {
          try Self.perform { () throws(SecretServiceFault) in
            try session.write(
              SecretServiceMarkCoding.encode(next),
              contentType: SecretServiceMarkCoding.contentType, to: found.item)
          }
        }
        assert(next.mark >= previous.mark, "the mark never decreases on observation")
        return ClockMarkTransition(
          previous: previous, current: next, wrote: wrote, observation: observation)
      }
    }

    /// Creates the first record (generation 0, mark and floor at the wall reading) when none
    /// exists; an existing readable record is returned unchanged.
    ///
    /// - Parameter clocks: Reads the clocks; called under the lock file, only when no record
    ///   exists.
    /// - Returns: The record now stored.
    /// - Throws: ``StoreError``: `unreadable` (not replaced), `writeFailed`,
    ///   `lockFailed`, or `storeUnusable`.
    public func createFirstMark(readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkRecord
    {
      try run(locked: true) { session throws(StoreError) in
        if let found = try Self.findRecord(session) { return try Self.decode(found) }
        let record = ClockMarkRecord.afterOnlineSignIn(generation: 0, at: clocks())
        try Self.perform { () throws(SecretServiceFault) in
          try session.create(
            kind: Self.kind, key: Self.key, label: label,
            bytes: SecretServiceMarkCoding.encode(record),
            contentType: SecretServiceMarkCoding.contentType)
        }
        return record
      }
    }

    /// Writes the record an online sign-in earns: generation + 1 (1 over an absent or unreadable
    /// record), mark = the wall reading, floor re-anchored. Where several secrets carry the
    /// record's attributes, the first is rewritten and the others deleted: this is the one path
    /// allowed to replace evidence.
    ///
    /// - Parameter clocks: Reads the clocks; called once, under the lock file.
    /// - Returns: The new record.
    /// - Throws: ``StoreError``: `writeFailed` (old secret intact), `lockFailed`, or
    ///   `storeUnusable`.
    public func resetAfterOnlineSignIn(readingClocks clocks: () -> ClockObservation)
      throws(StoreError) -> ClockMarkRecord
    {
      try run(locked: true) { session throws(StoreError) in
        let observation = clocks()
        let found = try Self.perform { () throws(SecretServiceFault) in
          try session.find(kind: Self.kind, key: Self.key)
        }
        var generation: UInt64 = 1
        if found.count == 1, let old = try? Self.decode(found[0]) {
          generation = ClockMarkRecord.generation(after: old.generation)
        }
        let record = ClockMarkRecord.afterOnlineSignIn(generation: generation, at: observation)
        let bytes = SecretServiceMarkCoding.encode(record)
        try Self.perform { () throws(SecretServiceFault) in
          if let first = found.first {
            try session.write(
              bytes, contentType: SecretServiceMarkCoding.contentType, to: first.item)
            for duplicate in found.dropFirst() { try session.delete(duplicate.item) }
          } else {
            try session.create(
              kind: Self.kind, key: Self.key, label: label, bytes: bytes,
              contentType: SecretServiceMarkCoding.contentType)
          }
        }
        return record
      }
    }

    private var label: String { "OfflineTTL clock mark (\(configuration.applicationID))" }

    // MARK: - Helpers

    private func run<Result>(
      locked: Bool, _ body: (SecretServiceSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
      try SecretServiceOperation.run(
        configuration, lock: locked ? "marks" : nil, fault: Self.mapped,
        lockFailure: {
          StoreError(code: .lockFailed, errno: $0.errno, message: $0.message)
        },
        body)
    }

    private static func perform<Result>(_ call: () throws(SecretServiceFault) -> Result)
      throws(StoreError) -> Result
    {
      try SecretServiceOperation.perform(mapped, call)
    }

    static func mapped(_ fault: SecretServiceFault) -> StoreError {
      StoreError(
        code: fault.duringWrite ? .writeFailed : .storeUnusable, unusableReason: fault.reason,
        message: fault.message)
    }

    private static func findRecord(_ session: SecretServiceSession) throws(StoreError)
      -> SecretServiceFoundItem?
    {
      let found = try perform { () throws(SecretServiceFault) in
        try session.find(kind: kind, key: key)
      }
      guard found.count <= 1 else {
        throw StoreError(
          code: .unreadable, unreadableReason: .malformed,
          message: "\(found.count) secrets carry the clock mark's attributes; left alone")
      }
      return found.first
    }

    private static func decode(_ found: SecretServiceFoundItem) throws(StoreError)
      -> ClockMarkRecord
    {
      guard let secret = found.secret else {
        throw StoreError(
          code: .storeUnusable, unusableReason: .collectionLocked,
          message: "the clock mark secret is locked")
      }
      return try SecretServiceMarkCoding.decode(secret)
    }

    private static func absent() -> StoreError {
      StoreError(code: .absent, message: "no clock mark secret in the default collection")
    }
  }
#endif
