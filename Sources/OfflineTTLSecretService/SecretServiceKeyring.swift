#if SecretService
  import OfflineTTL

  /// Operations on the provider's `default` collection itself, outside any store.
  public enum SecretServiceKeyring {
    /// Whether the `default` collection holds any secret of the configuration's application id
    /// (a clock mark, an item or a sealing key), locked or not; no secret is read or written.
    ///
    /// - Parameter configuration: The application id, the time limit and the budget to spend.
    /// - Returns: `true` when at least one such secret exists.
    /// - Throws: `StoreError` with code `storeUnusable` and a `StoreUnusableReason` when the
    ///   service cannot be reached or the collection is locked.
    /// - Complexity: One D-Bus search (after the connection).
    public static func holdsSecrets(configuration: SecretServiceStoreConfiguration)
      throws(StoreError) -> Bool
    {
      do {
        return try SecretServiceSession.run(configuration) { session in
          try !session.searchPaths(kind: nil, key: nil).isEmpty
        }
      } catch let fault as SecretServiceFault {
        throw SecretServiceOperation.storeError(fault)
      } catch {
        throw StoreError(code: .storeUnusable, message: "\(error)")
      }
    }

    /// Locks the `default` collection (no prompt is needed to lock). Afterwards every store
    /// operation fails with `collection_locked` until the user unlocks it; nothing is lost.
    ///
    /// - Parameter configuration: The time limit to apply (the application id is not used).
    /// - Throws: `StoreError` with code `storeUnusable` and a `StoreUnusableReason`
    ///   when the service cannot be reached.
    public static func lockDefaultCollection(configuration: SecretServiceStoreConfiguration)
      throws(StoreError)
    {
      do {
        try SecretServiceSession.run(configuration, connectingEvenIfLocked: true) { session in
          try session.lockCollection()
        }
      } catch let fault as SecretServiceFault {
        throw SecretServiceOperation.storeError(fault)
      } catch {
        throw StoreError(code: .storeUnusable, message: "\(error)")
      }
    }
  }
#endif
