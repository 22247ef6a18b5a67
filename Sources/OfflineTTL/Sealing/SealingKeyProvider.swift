/// Where a sealed store's key comes from: the caller's configuration, never the store.
///
/// A store does not record where its key is, so a forged store cannot point at the forger's key:
/// the caller names the provider, and a store whose files were sealed with another key, or not
/// sealed, is refused. See <doc:ThreatModel> for what sealing protects and what it cannot.
///
/// Requirements of every implementation:
/// 1. ``loadKey()`` never creates a key, never prompts, and returns or fails within a bounded
///    time. The offline path (checks, reads, observations) calls only this.
/// 2. ``loadOrCreateKey()`` creates a missing key from a secure random source, atomically: two
///    processes creating at once end with one key, which both return. Only the online path (an
///    online sign-in) calls it.
/// 3. Failures are ``SealingKeyError``s with a code that says why (missing, wrong size, insecure
///    mode, wrong owner, symbolic link, keyring unusable); nothing is changed by a failure.
///
/// Library providers: ``FileSealingKeyProvider`` (a key file outside the store) and, with the
/// `SecretService` trait, `SecretServiceSealingKeyProvider` (one item in the Linux keyring).
public protocol SealingKeyProvider: Sendable, CustomStringConvertible {
  /// The existing key.
  ///
  /// - Returns: The key.
  /// - Throws: ``SealingKeyError``: ``SealingKeyError/Code/missing`` when there is none yet,
  ///   or why it cannot be used.
  func loadKey() throws(SealingKeyError) -> SealingKey

  /// The existing key, or a new random one created and stored now (online path only).
  ///
  /// - Returns: The key now stored.
  /// - Throws: ``SealingKeyError`` when no key can be read or created.
  func loadOrCreateKey() throws(SealingKeyError) -> SealingKey

  /// Refuses a key kept inside the store it seals (whoever can replace the store could then
  /// replace the key). Called by a sealed store before it uses the key.
  ///
  /// - Parameter directory: The store directory's path.
  /// - Throws: ``SealingKeyError`` with code ``SealingKeyError/Code/insideStore``.
  func checkKeptOutside(storeDirectory directory: String) throws(SealingKeyError)

  /// The existing key for the store in `directory`: ``checkKeptOutside(storeDirectory:)`` then
  /// ``loadKey()`` (the offline path; never creates a key).
  ///
  /// A provider may answer from memory while it can tell that neither the key nor its placement
  /// changed (``FileSealingKeyProvider`` does; see <doc:ThreatModel>).
  ///
  /// - Parameter directory: The store directory's path.
  /// - Returns: The key.
  /// - Throws: ``SealingKeyError``, as the two calls.
  func loadKey(forStoreAt directory: String) throws(SealingKeyError) -> SealingKey

  /// What names the key this provider loads: two providers whose identities are equal load one
  /// key, however each was configured or spelt. ``OfflineAccessGate`` compares its two stores'
  /// providers with it (``OfflineAccessGate/sealingConflict``).
  ///
  /// A provider answers from its configuration and, where that names a place in the file
  /// system, from that place as it is now (a key file's directory with its symbolic links
  /// resolved); it never loads or creates the key.
  ///
  /// - Returns: The identity; the default is the provider's `description` as the only part,
  ///   so that a provider of another kind is alike only to one that describes itself alike.
  /// - Complexity: O(1) in the number of keys; a provider may resolve a path (one lookup per
  ///   component).
  func keyIdentity() -> SealingKeyIdentity
}

extension SealingKeyProvider {
  /// The default: the kind `provider` with `description` as its only part.
  public func keyIdentity() -> SealingKeyIdentity {
    SealingKeyIdentity(kind: "provider", parts: [description])
  }

  /// Keys kept outside the file system (a keyring) are never inside a store: nothing to check.
  public func checkKeptOutside(storeDirectory directory: String) throws(SealingKeyError) {}

  /// The default: ``checkKeptOutside(storeDirectory:)``, then ``loadKey()``.
  public func loadKey(forStoreAt directory: String) throws(SealingKeyError) -> SealingKey {
    try checkKeptOutside(storeDirectory: directory)
    return try loadKey()
  }
}
