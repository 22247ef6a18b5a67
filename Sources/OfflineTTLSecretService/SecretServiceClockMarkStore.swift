#if SecretService
  import OfflineTTL

  /// A `ClockMarkStore` that keeps the clock mark record as a secret in the Secret Service
  /// (GNOME Keyring, KWallet, KeePassXC: the Linux counterpart of the Keychain), through libsecret.
  ///
  /// The record is one secret in the `default` collection with the attributes
  /// `application` = ``SecretServiceStoreConfiguration/applicationID``, `kind` = `clock-mark`,
  /// `key` = `mark`. Its value holds the exact record as text with a CRC-32 (the daemon's own
  /// `modified` time has 1-second resolution and follows the daemon's clock: it is not used).
  ///
  /// - Atomicity: `observe`, `createFirstMark` and `resetAfterOnlineSignIn` (the shared state machine) hold
  ///   an `flock` on a lock file in ``SecretServiceStoreConfiguration/lockDirectory`` around their
  ///   read → advance → write, so every thread and process using the same application id and lock
  ///   directory is serialized. The advance is the shared `ClockMarkRecord.observing(_:)` and
  ///   `ClockMarkRecord.needsWrite(becoming:resolution:)`, exactly as in the file store.
  /// - Durability: the provider replaces a secret whole and writes its collection to disk before
  ///   answering (GNOME Keyring rewrites the keyring file through a temporary file and rename).
  /// - Fail closed: every failure is a `StoreError`. Service failures have code
  ///   `storeUnusable` (or `writeFailed` for a failed write) and a `StoreUnusableReason`:
  ///   `no_session_bus`, `no_provider`, `collection_locked` (no unlock prompt unless
  ///   ``SecretServiceStoreConfiguration/allowsUnlockPrompt``), `collection_missing`,
  ///   `timed_out`. A missing secret is `absent`; one that does not decode, or two secrets with
  ///   the same attributes, is `unreadable` and left alone. Nothing is deleted on any failure.
  /// - Time limit: each operation is bounded by ``SecretServiceStoreConfiguration/timeout``.
  public struct SecretServiceClockMarkStore: ClockMarkStorage {
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
    /// - Throws: `StoreError`: `absent`, `unreadable`, or `storeUnusable`.
    public func read() throws(StoreError) -> ClockMarkRecord {
      try run(locked: false) { session throws(StoreError) in
        guard let found = try Self.findRecord(session) else { throw Self.absent() }
        return try Self.decode(found)
      }
    }

    // observe(readingClocks:), createFirstMark(_:) and resetAfterOnlineSignIn(_:) are the
    // shared state machine of `ClockMarkStorage`; the primitives follow.

    /// One locked operation: the connection, and the secrets found carrying the record's
    /// attributes.
    public struct Access {
      let session: SecretServiceSession
      var found: [SecretServiceFoundItem] = []
    }

    /// Holds the `marks` lock file and a connection to the default collection while `body` runs.
    public func withExclusiveAccess<Result>(
      for operation: ClockMarkStorageOperation,
      _ body: (inout Access) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
      // The online reset replaces a lock file it cannot use but may (a hard link, a FIFO).
      try run(locked: true, repairing: operation == .reset) { session throws(StoreError) in
        var access = Access(session: session)
        return try body(&access)
      }
    }

    /// Finds the record's secret and decodes it: `absent` when there is none, `unreadable` when
    /// it does not decode or several secrets carry its attributes.
    public func loadRecord(in access: inout Access, forWriting: Bool) throws(StoreError)
      -> ClockMarkRecord
    {
      let session = access.session
      access.found = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
        try session.find(kind: Self.kind, key: Self.key)
      }
      guard access.found.count <= 1 else {
        throw StoreError(
          code: .unreadable, unreadableReason: .malformed,
          message: "\(access.found.count) secrets carry the clock mark's attributes; left alone")
      }
      guard let found = access.found.first else { throw Self.absent() }
      return try Self.decode(found)
    }

    /// Replaces the secret's value (the provider writes its collection before answering).
    public func writeObserved(_ record: ClockMarkRecord, in access: inout Access)
      throws(StoreError)
    {
      let session = access.session
      guard let item = access.found.first?.item else { throw Self.absent() }
      try SecretServiceOperation.perform { () throws(SecretServiceFault) in
        try session.write(
          SecretServiceMarkCoding.encode(record),
          contentType: SecretServiceMarkCoding.contentType, to: item)
      }
    }

    /// Creates the record's secret.
    public func writeFirst(_ record: ClockMarkRecord, in access: inout Access)
      throws(StoreError)
    {
      let session = access.session
      let label = self.label
      try SecretServiceOperation.perform { () throws(SecretServiceFault) in
        try session.create(
          kind: Self.kind, key: Self.key, label: label,
          bytes: SecretServiceMarkCoding.encode(record),
          contentType: SecretServiceMarkCoding.contentType)
      }
    }

    /// Rewrites the first secret carrying the record's attributes and deletes the others (the
    /// one path allowed to replace evidence), or creates the secret when there is none.
    public func writeReset(
      _ record: ClockMarkRecord, in access: inout Access, overLoadedRecord: Bool
    ) throws(StoreError) {
      let session = access.session
      let found = access.found
      let label = self.label
      let bytes = SecretServiceMarkCoding.encode(record)
      try SecretServiceOperation.perform { () throws(SecretServiceFault) in
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
    }

    /// `nil`: a reset over an unreadable secret writes generation 1.
    public func salvagedGeneration(in access: inout Access) -> UInt64? { nil }

    private var label: String { "OfflineTTL clock mark (\(configuration.applicationID))" }

    // MARK: - Helpers

    private func run<Result>(
      locked: Bool, repairing: Bool = false,
      _ body: (SecretServiceSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
      try SecretServiceOperation.run(
        configuration, lock: locked ? "marks" : nil, repairing: repairing, body)
    }

    private static func findRecord(_ session: SecretServiceSession) throws(StoreError)
      -> SecretServiceFoundItem?
    {
      let found = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
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
