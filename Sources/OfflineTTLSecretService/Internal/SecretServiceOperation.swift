#if SecretService
  import OfflineTTL

  /// Runs one store operation: optionally under the lock file, then connected to the default
  /// collection, mapping service and lock failures to the store's own error type.
  enum SecretServiceOperation {
    /// - Parameters:
    ///   - configuration: The store's configuration.
    ///   - locked: Whether to hold the lock file (every read → advance → write and every commit).
    ///   - fault: Maps a service failure to the store's error.
    ///   - lockFailure: Maps a lock-file failure to the store's error.
    ///   - body: The operation's calls.
    /// - Throws: The store's error type only.
    static func run<Result, Failure: Error>(
      _ configuration: SecretServiceStoreConfiguration, locked: Bool,
      fault: (SecretServiceFault) -> Failure,
      lockFailure: (SecretServiceLockFile.Failure) -> Failure,
      _ body: (SecretServiceSession) throws(Failure) -> Result
    ) throws(Failure) -> Result {
      guard locked else { return try connected(configuration, fault, body) }
      return try SecretServiceLockFile.withLock(
        path: configuration.lockFilePath, timeout: configuration.lockTimeout, failure: lockFailure
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
  }
#endif
