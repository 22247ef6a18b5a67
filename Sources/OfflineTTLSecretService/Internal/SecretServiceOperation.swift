#if SecretService
  import OfflineTTL

  /// Runs one store operation: optionally under the lock file, then connected to the default
  /// collection, mapping service and lock failures to the store's own error type.
  enum SecretServiceOperation {
    /// - Parameters:
    ///   - configuration: The store's configuration.
    ///   - lock: Which lock file to hold (`marks` for every read → advance → write, `items` for
    ///     every commit), or `nil` for none.
    ///   - repairing: Whether this is an online operation, which replaces a lock file it
    ///     cannot use but may (see `SecretServiceLockFile.withLock`).
    ///   - fault: Maps a service failure to the store's error.
    ///   - lockFailure: Maps a lock-file failure to the store's error.
    ///   - body: The operation's calls.
    /// - Throws: The store's error type only.
    static func run<Result, Failure: Error>(
      _ configuration: SecretServiceStoreConfiguration, lock: String?, repairing: Bool = false,
      fault: (SecretServiceFault) -> Failure,
      lockFailure: (SecretServiceLockFile.Failure) -> Failure,
      _ body: (SecretServiceSession) throws(Failure) -> Result
    ) throws(Failure) -> Result {
      guard let lock else { return try connected(configuration, fault, body) }
      return try SecretServiceLockFile.withLock(
        path: configuration.lockFilePath(for: lock), timeout: configuration.lockTimeout,
        repairing: repairing, failure: lockFailure
      ) { () throws(Failure) -> Result in try connected(configuration, fault, body) }
    }

    private static func connected<Result, Failure: Error>(
      _ configuration: SecretServiceStoreConfiguration, _ fault: (SecretServiceFault) -> Failure,
      _ body: (SecretServiceSession) throws(Failure) -> Result
    ) throws(Failure) -> Result {
      do {
        return try SecretServiceSession.run(configuration) { session in try body(session) }
      } catch let error as Failure {
        throw error
      } catch let failure as SecretServiceFault {
        throw fault(failure)
      } catch {
        throw fault(
          SecretServiceFault(reason: .serviceFailed, duringWrite: false, message: "\(error)"))
      }
    }

    /// Runs service calls, mapping their failure.
    static func perform<Result, Failure: Error>(
      _ fault: (SecretServiceFault) -> Failure, _ call: () throws(SecretServiceFault) -> Result
    ) throws(Failure) -> Result {
      do { return try call() } catch { throw fault(error) }
    }

    /// ``run(_:lock:repairing:fault:lockFailure:_:)`` for the stores: every failure as a
    /// `StoreError` (``storeError(_:)``, `SecretServiceLockFile.storeError(_:)`).
    static func run<Result>(
      _ configuration: SecretServiceStoreConfiguration, lock: String?, repairing: Bool = false,
      _ body: (SecretServiceSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
      try run(
        configuration, lock: lock, repairing: repairing, fault: storeError,
        lockFailure: SecretServiceLockFile.storeError, body)
    }

    /// ``perform(_:_:)`` for the stores: a service failure as a `StoreError`.
    static func perform<Result>(_ call: () throws(SecretServiceFault) -> Result)
      throws(StoreError) -> Result
    {
      try perform(storeError, call)
    }

    /// A service failure as a store error: `write_failed` when it happened during a write,
    /// otherwise `store_unusable` with the service's reason.
    static func storeError(_ fault: SecretServiceFault) -> StoreError {
      StoreError(
        code: fault.duringWrite ? .writeFailed : .storeUnusable, unusableReason: fault.reason,
        message: fault.message)
    }
  }
#endif
