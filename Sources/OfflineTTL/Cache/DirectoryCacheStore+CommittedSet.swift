/// The set a generation committed, for the item reads that name a generation: one lookup that
/// the whole-item read (``DirectoryCacheStore/item(forKey:generation:)``) and the streaming read
/// (``DirectoryCacheStore/streamItem(forKey:generation:chunkSize:accept:chunk:)``) share.
extension DirectoryCacheStore {
  /// Where the set a generation committed keeps a key (``committedSet(holding:generation:in:)``).
  enum CommittedSet {
    /// The live set (`cache/`): no committed staging, or no generation asked for.
    case live
    /// The committed staging `next-<g>` of that name, of the sign-in with that id, lists the
    /// key (it may already have been renamed into `items/`).
    case staged(String, signIn: SignInID?)
    /// The committed staging does not list the key: it is absent from that set.
    case absent
  }

  /// Which set to read `key` from for the set `generation` committed (`nil`: the live set):
  /// the committed staging when one exists (``committedStaging(_:generation:)``), else the
  /// live set. Shared by the whole-item read and the streaming read.
  ///
  /// - Throws: ``StoreError`` (`insecure_store`, ...) when such a staging is another user's or
  ///   writable by others.
  func committedSet(holding key: CacheItemKey, generation: UInt64?, in cache: StoreDirectory)
    throws(StoreError) -> CommittedSet
  {
    guard let generation else { return .live }
    let staged: (name: String, catalog: CacheCatalog, signIn: SignInID?)?
    do {
      staged = try committedStaging(cache, generation: generation)
    } catch {
      throw failure(error, .itemUnreadable, key: key)
    }
    guard let staged else { return .live }
    return staged.catalog.entries[key.rawValue] == nil
      ? .absent : .staged(staged.name, signIn: staged.signIn)
  }

  /// Reads with `read` from `set`: from the staging first, then (a key already renamed
  /// forward) from the live set; `nil` when the set does not hold it. The staging is opened by
  /// name and read only when the opened directory still records the committed sign-in's id (a
  /// staging rolled forward and removed meanwhile, and a copy of another put back under its
  /// name, is not read). The caller's errors pass through unchanged.
  func readCommitted<T, E: Error>(
    from set: CommittedSet, in cache: StoreDirectory,
    _ read: (StoreDirectory) throws(E) -> T?
  ) throws(E) -> T? {
    switch set {
    case .absent:
      return nil
    case .staged(let name, let signIn):
      if let next = try? files.openDirectory(cache, name) {
        defer { files.close(next) }
        if (try? stagedSignIn(next)) == .some(signIn), let found = try read(next) { return found }
      }
      return try read(cache)
    case .live:
      return try read(cache)
    }
  }
}
