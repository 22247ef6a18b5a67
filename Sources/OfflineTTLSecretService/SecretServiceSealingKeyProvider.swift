#if SecretService
  import OfflineTTL

  /// A sealing key kept as one secret in the Secret Service's `default` collection (the Linux
  /// keyring), found by the attributes `application` =
  /// ``SecretServiceStoreConfiguration/applicationID``, `kind` = `sealing-key` and `key` =
  /// ``name``. The secret's value is the key's 32 bytes.
  ///
  /// - ``loadKey()`` makes one search (the secret loaded with it), under the configuration's
  ///   time limit; it never creates a key and never prompts: a locked collection is
  ///   `key_unavailable (collection_locked)` unless the configuration allows the unlock prompt;
  ///   no session bus is `key_unavailable (no_session_bus)`; a service that stops answering is
  ///   `key_unavailable (timed_out)`.
  /// - ``loadOrCreateKey()`` (online sign-in only) holds the configuration's lock file named
  ///   `sealing-key` while it searches and, when no key exists, creates one from libsodium's
  ///   random source, so concurrent sign-ins end with one key.
  public struct SecretServiceSealingKeyProvider: SealingKeyProvider {
    /// Where the secret lives, and the time limits.
    public let configuration: SecretServiceStoreConfiguration
    /// The secret's `key` attribute, naming this key among the application's keys.
    public let name: String

    static let kind = "sealing-key"
    static let contentType = "application/octet-stream"

    /// Creates a provider; connects lazily, once per call.
    ///
    /// - Parameters:
    ///   - configuration: The application id, lock directory, prompt policy and time limits.
    ///   - name: The `key` attribute; default `store`. A name holding NUL is refused when the
    ///     key is loaded (`key_io`).
    public init(configuration: SecretServiceStoreConfiguration, name: String = "store") {
      self.configuration = configuration
      self.name = name
    }

    /// `Secret Service key <application id>/<name>`.
    public var description: String {
      "Secret Service key \(configuration.applicationID)/\(name)"
    }

    /// `Secret Service key` with two parts, the application id and the name: the attributes the
    /// key's secret is found by (the lock directory, the prompt policy and the time limits do not
    /// change which secret that is). Compared part by part, so no application id and name run
    /// into each other. The command-line tool's application id names the store directory with
    /// its symbolic links resolved, so every spelling of one store has one key.
    ///
    /// - Returns: The identity; no I/O.
    public func keyIdentity() -> SealingKeyIdentity {
      SealingKeyIdentity(kind: "Secret Service key", parts: [configuration.applicationID, name])
    }

    /// The stored key.
    ///
    /// - Returns: The key.
    /// - Throws: `SealingKeyError`: `key_missing`, `key_ambiguous` (two secrets match),
    ///   `key_wrong_size`, `key_weak` (32 zero bytes), or `key_unavailable` with a
    ///   `StoreUnusableReason`.
    /// - Complexity: One connection and one search (a few D-Bus round trips).
    public func loadKey() throws(SealingKeyError) -> SealingKey {
      try SecretServiceOperation.run(
        configuration, lock: nil, fault: Self.mapped, lockFailure: Self.lockFailure
      ) { session throws(SealingKeyError) in
        guard let key = try find(session) else {
          throw SealingKeyError(
            code: .missing,
            reason: "no sealing key \(name) for \(configuration.applicationID) in the keyring; "
              + "only an online sign-in creates one")
        }
        return key
      }
    }

    /// The stored key, or a new random one stored now.
    ///
    /// - Returns: The key now stored.
    /// - Throws: `SealingKeyError`: as ``loadKey()``, except that a missing key is created;
    ///   `key_io` when the lock file cannot be taken.
    public func loadOrCreateKey() throws(SealingKeyError) -> SealingKey {
      try SecretServiceOperation.run(
        configuration, lock: Self.kind, fault: Self.mapped, lockFailure: Self.lockFailure
      ) { session throws(SealingKeyError) in
        if let key = try find(session) { return key }
        let key = SealingKey.random()
        let bytes = key.withUnsafeBytes { Array($0) }
        try SecretServiceOperation.perform(Self.mapped) { () throws(SecretServiceFault) in
          try session.create(
            kind: Self.kind, key: name,
            label: "OfflineTTL sealing key (\(configuration.applicationID), \(name))",
            bytes: bytes, contentType: Self.contentType)
        }
        return key
      }
    }

    /// Deletes the key from the keyring: every secret carrying its attributes (a duplicate
    /// included), under the same lock file as ``loadOrCreateKey()``. A store sealed with it can
    /// no longer be read offline; only a sign-in seals it again, with a new key. For a key whose
    /// store is gone (a temporary store, as `offline-ttl demo` makes).
    ///
    /// - Returns: How many secrets were deleted (0 when there was no key).
    /// - Throws: `SealingKeyError`: `key_unavailable` with a `StoreUnusableReason`, `key_io`
    ///   or `key_lock_timed_out` for the lock file.
    /// - Complexity: One connection, one search and one call per secret deleted.
    @discardableResult
    public func deleteKey() throws(SealingKeyError) -> Int {
      try checkName()
      return try SecretServiceOperation.run(
        configuration, lock: Self.kind, fault: Self.mapped, lockFailure: Self.lockFailure
      ) { session throws(SealingKeyError) in
        try SecretServiceOperation.perform(Self.mapped) { () throws(SecretServiceFault) in
          let found = try session.find(kind: Self.kind, key: name, loadSecrets: false)
          for item in found { try session.delete(item.item) }
          return found.count
        }
      }
    }

    private func checkName() throws(SealingKeyError) {
      // libsecret takes C strings: `a\0b` would find (or make, or delete) the key `a`.
      guard !name.utf8.contains(0) else {
        throw SealingKeyError(
          code: .io,
          reason: "the sealing key's name holds NUL; the keyring would see only its start")
      }
    }

    private func find(_ session: SecretServiceSession) throws(SealingKeyError) -> SealingKey? {
      try checkName()
      let found = try SecretServiceOperation.perform(Self.mapped) {
        () throws(SecretServiceFault) in try session.find(kind: Self.kind, key: name)
      }
      guard found.count <= 1 else {
        throw SealingKeyError(
          code: .ambiguous,
          reason: "\(found.count) secrets carry the attributes of sealing key \(name); none is used"
        )
      }
      guard let item = found.first else { return nil }
      guard let secret = item.secret else {
        throw SealingKeyError(
          code: .unavailable, unusableReason: .collectionLocked,
          reason: "the sealing key's secret is locked")
      }
      guard secret.count == SealingKey.byteCount else {
        throw SealingKeyError(
          code: .wrongSize,
          reason:
            "the sealing key's secret holds \(secret.count) bytes, not \(SealingKey.byteCount)")
      }
      guard secret.contains(where: { $0 != 0 }) else {
        throw SealingKeyError(
          code: .weak,
          reason: "the sealing key's secret is 32 zero bytes, not a key; none is used")
      }
      return try SealingKey(bytes: secret)
    }

    static func mapped(_ fault: SecretServiceFault) -> SealingKeyError {
      SealingKeyError(code: .unavailable, unusableReason: fault.reason, reason: fault.message)
    }

    static func lockFailure(_ failure: SecretServiceLockFile.Failure) -> SealingKeyError {
      SealingKeyError(
        code: failure.timedOut ? .lockTimedOut : .io, errno: failure.timedOut ? nil : failure.errno,
        reason: failure.message)
    }
  }
#endif
