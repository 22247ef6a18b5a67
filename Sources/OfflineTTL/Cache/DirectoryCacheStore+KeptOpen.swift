import Synchronization

/// The descriptors a long-lived unsealed ``DirectoryCacheStore`` keeps open for its repeated
/// summaries: the store directory, `cache/` and the index, with what `fstat` said about each
/// when it was opened and checked by the secure open. Shared by every copy of one store value;
/// closed when the last copy goes away.
final class KeptCacheFiles: Sendable {
  struct Kept: Sendable {
    let store: StoreDirectory
    let storeStatus: FileStatus
    let cache: StoreDirectory
    let cacheStatus: FileStatus
    let index: FileDescriptor
    let indexStatus: FileStatus
  }

  enum State: Sendable {
    /// No summary has been served from a consistent index yet: the next one takes the full path
    /// and keeps nothing.
    case unused
    /// A summary was served from a consistent index: the next one opens and keeps the
    /// descriptors.
    case used
    case kept(Kept)
  }

  let state = Mutex<State>(.unused)
  let system: Syscalls

  init(system: Syscalls) {
    self.system = system
  }

  deinit {
    state.withLock { state in
      if case .kept(let kept) = state { Self.close(kept, system) }
    }
  }

  static func close(_ kept: Kept, _ system: Syscalls) {
    system.closeIgnoringErrors(kept.index)
    system.closeIgnoringErrors(kept.cache.fd)
    system.closeIgnoringErrors(kept.store.fd)
  }
}

extension DirectoryCacheStore {
  /// The live set's summary from the index, read through descriptors kept open, or `nil` when
  /// the caller must take the full path (``summary()`` then does exactly what it did before).
  ///
  /// Only for an unsealed store, and only once a summary of this store value was served from a
  /// consistent index (a one-shot process opens nothing beyond the full path's descriptors).
  /// The descriptors stay open between calls; every call checks, before it trusts them:
  /// - `lstat` of the store directory's path (its last name never followed): a directory, the
  ///   one kept open (a directory renamed into its place is noticed), owned by this user and
  ///   writable by nobody else;
  /// - `fstatat` of `cache` in it: the directory kept open, with the same owner check;
  /// - `fstatat` of `pending` in `cache/`: absent (a sign-in or commit in progress, or one that
  ///   crashed, sends the call to the full path);
  /// - `fstatat` of `index`: the very file kept open, unchanged in every field `fstat` reports
  ///   (device, inode, type, owner, mode, size, change and modification times); the store
  ///   replaces its index only by rename, so a new index is a new inode;
  /// then reads the 72-byte header with one `pread` and checks it (magic, version, checksum,
  /// bounds, the file's size) and the `items/` directory's stamp (`fstatat`) against it, as
  /// the full path does. A header that does not decode or a stamp that differs sends the call to
  /// the full path (which rebuilds in memory or refuses, as before); a replaced or changed file
  /// or directory also closes the kept descriptors, and the next call reopens them.
  ///
  /// Reading through a descriptor whose file is, at the time of the check, the one the path
  /// names is the same as opening it by name then: the inode cannot be reused while it is open.
  ///
  /// System calls: `lstat`, 4 `fstatat`, 1 `pread`; no open, close, lock, write or sync.
  func keptSummary() -> ItemTimeSummary? {
    guard sealing == nil else { return nil }
    return kept.state.withLock { state -> ItemTimeSummary? in
      switch state {
      case .unused:
        return nil
      case .used:
        guard let opened = openKept() else {
          state = .unused
          return nil
        }
        state = .kept(opened)
      case .kept: break
      }
      guard case .kept(let files) = state else { return nil }
      switch readKept(files) {
      case .summary(let summary): return summary
      case .fullPath: return nil
      case .replaced:
        KeptCacheFiles.close(files, kept.system)
        state = .used
        return nil
      }
    }
  }

  /// Notes that a summary was served from a consistent index (the next one may keep
  /// descriptors open).
  func noteConsistentIndex() {
    guard sealing == nil else { return }
    kept.state.withLock { state in
      if case .unused = state { state = .used }
    }
  }

  private enum KeptRead {
    case summary(ItemTimeSummary)
    /// The full path this time (`pending` present, a header that does not decode, a stamp that
    /// differs): the descriptors are still the right ones.
    case fullPath
    /// A directory or the index is not the one kept open, or fails its checks: close them.
    case replaced
  }

  private func readKept(_ kept: KeptCacheFiles.Kept) -> KeptRead {
    let sys = files.sys
    guard let store = try? sys.lstat(Self.unfollowedPath(directory)),
      store.kind == .directory, store.isSameFile(as: kept.storeStatus),
      isSecure(store, kept.store.path),
      let cache = try? sys.fstatat(kept.store.fd, Self.cacheName),
      cache.kind == .directory, cache.isSameFile(as: kept.cacheStatus),
      isSecure(cache, kept.cache.path)
    else { return .replaced }
    do {
      _ = try sys.fstatat(kept.cache.fd, Self.pendingName)
      return .fullPath
    } catch {
      guard error == .noSuchFileOrDirectory else { return .fullPath }
    }
    guard let index = try? sys.fstatat(kept.cache.fd, Self.indexName),
      index == kept.indexStatus
    else { return .replaced }
    var bytes = [UInt8](repeating: 0, count: CacheFormat.indexHeaderSize)
    guard (try? sys.preadAll(kept.index, into: &bytes, at: 0)) == CacheFormat.indexHeaderSize,
      let header = Self.decodeIndexHeader(bytes),
      UInt64(index.size) == UInt64(CacheFormat.indexHeaderSize) + header.bodyLength,
      let stamp = try? itemsStamp(kept.cache), stamp == header.stamp
    else { return .fullPath }
    return .summary(header.summary)
  }

  private func isSecure(_ status: FileStatus, _ path: String) -> Bool {
    (try? files.secure.checkOwnership(status, path: path)) != nil
  }

  /// The store path as the secure open names it, for `lstat`: trailing `/` and `/.` dropped, so
  /// that a symbolic link in place of the store directory is seen as a link, not followed.
  static func unfollowedPath(_ path: String) -> String {
    let (parent, name) = SecureStoreFiles.split(path)
    guard let parent else { return name }
    return parent.hasSuffix("/") ? parent + name : parent + "/" + name
  }

  /// Opens and checks the store directory, `cache/` and the index the way the full path does,
  /// to keep them open; `nil` when any is missing or fails a check.
  private func openKept() -> KeptCacheFiles.Kept? {
    guard let store = try? files.openStore(directory, creating: false) else { return nil }
    guard let storeStatus = try? files.sys.fstat(store.fd),
      let cache = try? files.openDirectory(store, Self.cacheName)
    else {
      files.close(store)
      return nil
    }
    guard let cacheStatus = try? files.sys.fstat(cache.fd),
      let index = try? files.openFile(cache, Self.indexName, .readOnly)
    else {
      files.close(cache)
      files.close(store)
      return nil
    }
    return KeptCacheFiles.Kept(
      store: store, storeStatus: storeStatus, cache: cache, cacheStatus: cacheStatus,
      index: index.fd, indexStatus: index.status)
  }
}
