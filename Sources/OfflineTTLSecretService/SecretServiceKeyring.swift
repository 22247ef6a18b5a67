#if SecretService
  import OfflineTTL

  /// Operations on the provider's `default` collection itself, outside any store.
  public enum SecretServiceKeyring {
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
