import Synchronization

/// The descriptors a long-lived unsealed ``DirectoryCacheStore`` keeps open for its repeated
/// summaries.
typealias KeptCacheFiles = KeptStoreFiles<KeptCacheDescriptors>

/// The store directory, `cache/` and the index, with what `fstat` said about each when it was
/// opened and checked by the secure open; the store path as `lstat` names it; and, where the
/// store is on a local file system, a change watch and the summary the last full check served.
struct KeptCacheDescriptors: KeptDescriptorSet {
  let store: StoreDirectory
  let storeStatus: FileStatus
  let cache: StoreDirectory
  let cacheStatus: FileStatus
  let index: FileDescriptor
  let indexStatus: FileStatus
  /// The store path with any trailing `/` and `/.` removed (``DirectoryCacheStore/unfollowedPath(_:)``).
  let unfollowedPath: String
  /// The change watch of the store directory (``SharedStoreWatch``, shared with the mark store
  /// of the same directory), to which `cache/`, `items/` and the index were added; or `nil`.
  let watch: SharedStoreWatch?
  /// The summary the last full check served, the effective user it was checked for, and the
  /// watch's drain count (``SharedStoreWatch/State/changes``) of a `poll` made before that
  /// check; reused while a `poll` gives the same count. `nil` without a watch.
  var validated: (summary: ItemTimeSummary, user: UInt32, changes: UInt64)?
  /// A sealed store's counterpart of `validated` (`keptSealedSummaryDeferringBinding()`), with
  /// its drain count.
  var sealedValidated: (checked: SealedKeptSummary, changes: UInt64)? = nil

  /// Closes the descriptors (the shared watch is closed when its last store lets it go).
  func close(_ system: Syscalls) {
    system.closeIgnoringErrors(index)
    system.closeIgnoringErrors(cache.fd)
    system.closeIgnoringErrors(store.fd)
  }
}

extension DirectoryCacheStore {
  /// The live set's summary from the index, read through descriptors kept open, or `nil` when
  /// the caller must take the full path (``summary()`` then does exactly what it did before).
  ///
  /// Only for an unsealed store (a sealed one has `keptSealedSummaryDeferringBinding()`, over
  /// the same descriptors and checks), and only once a summary of this store value was served from a
  /// consistent index (a one-shot process opens nothing beyond the full path's descriptors).
  /// The descriptors stay open between calls.
  ///
  /// **The full check** (every call without a change watch, and with one whenever it reports a
  /// change): before it trusts the descriptors, the call checks
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
  /// System calls: `lstat`, 4 `fstatat`, 1 `pread`; no open, close, lock, write or sync.
  ///
  /// **With a change watch** (``StoreChangeWatch``: a store on a local file system), set up
  /// when the descriptors are opened and before their first full check, watching the store
  /// directory, `cache/`, `items/` and the index: a call first reads the watch once, without
  /// waiting. When nothing changed since the last full check that served a summary, that
  /// summary is served again after one `lstat` of the store path (still the directory kept
  /// open, so a store replaced by renaming any directory above it is noticed) and the same
  /// effective user: every file and directory that check looked at is as it was then (same
  /// inode, same bytes, same owner and mode: any write, change of owner, mode or link count,
  /// name created, removed or renamed in a watched directory, or watched directory moved, is an
  /// event). Any event drains the watch and takes the full check. The `lstat` is left out
  /// while the watch also watches the directories above the store (``PathWatch``: an absolute
  /// path of directories on local file systems), which then proves the same. System calls: one
  /// `poll`, one `lstat` (none with the path watch), one `geteuid`, made once per gate check for
  /// both stores over the directory:
  /// the watch is the directory's ``SharedStoreWatch``, shared with the mark store, which is
  /// given the same check (``StoreCheckScope``).
  ///
  /// Reading through a descriptor whose file is, at the time of the check, the one the path
  /// names is the same as opening it by name then: the inode cannot be reused while it is open.
  func keptSummary() -> ItemTimeSummary? {
    guard sealing == nil else { return nil }
    let sys = files.sys
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
      guard case .kept(var files) = state else { return nil }
      let view = files.watch?.view(sys)
      if let view, view.isKeptDirectory, let validated = files.validated,
        validated.changes == view.changes, validated.user == view.user
      {
        return validated.summary
      }
      if files.validated != nil {
        files.validated = nil
        state = .kept(files)
      }
      files.watch?.forgetView()
      switch readKept(files) {
      case .summary(let summary):
        if let view {
          files.validated = (summary, sys.effectiveUserID(), view.changes)
          state = .kept(files)
        }
        return summary
      case .fullPath: return nil
      case .replaced:
        files.close(sys)
        state = .used
        return nil
      }
    }
  }

  /// Notes that a summary was served from a consistent index (the next one may keep
  /// descriptors open).
  func noteConsistentIndex() {
    guard sealing == nil else { return }
    kept.noteUsed()
  }

  private enum KeptRead {
    case summary(ItemTimeSummary)
    /// The full path this time (`pending` present, a header that does not decode, a stamp that
    /// differs): the descriptors are still the right ones.
    case fullPath
    /// A directory or the index is not the one kept open, or fails its checks: close them.
    case replaced
  }

  /// What the kept files' checks (`checkKeptFiles(_:)`) found.
  enum KeptFilesCheck {
    /// Every check passed: read through the kept index.
    case checked
    /// `pending` exists (or cannot be looked up): the full path this time.
    case fullPath
    /// A directory or the index is not the one kept open, or fails its checks.
    case replaced
  }

  /// The checks before a kept read (unsealed and sealed): the store path still names the
  /// directory kept open, this user's and writable by nobody else; `cache` too; no `pending`;
  /// and `index` is the very file kept open, unchanged in every field `fstat` reports.
  /// System calls: `lstat`, 3 `fstatat`.
  func checkKeptFiles(_ kept: KeptCacheDescriptors) -> KeptFilesCheck {
    let sys = files.sys
    guard let store = try? sys.lstat(kept.unfollowedPath),
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
    return .checked
  }

  private func readKept(_ kept: KeptCacheDescriptors) -> KeptRead {
    let sys = files.sys
    switch checkKeptFiles(kept) {
    case .replaced: return .replaced
    case .fullPath: return .fullPath
    case .checked: break
    }
    var bytes = [UInt8](repeating: 0, count: CacheFormat.indexHeaderSize)
    guard (try? sys.preadAll(kept.index, into: &bytes, at: 0)) == CacheFormat.indexHeaderSize,
      let header = Self.decodeIndexHeader(bytes),
      UInt64(kept.indexStatus.size) == UInt64(CacheFormat.indexHeaderSize) + header.bodyLength,
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
  /// to keep them open, and sets up the change watch (before the first full check of what it
  /// watches); `nil` when any is missing or fails a check.
  func openKept() -> KeptCacheDescriptors? {
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
    let unfollowedPath = Self.unfollowedPath(directory)
    let watch = SharedStoreWatch.join(
      files.sys, path: unfollowedPath, directory: store.fd, status: storeStatus,
      watching: [cache.fd, index.fd], subdirectories: [Self.itemsName], in: cache.fd)
    return KeptCacheDescriptors(
      store: store, storeStatus: storeStatus, cache: cache, cacheStatus: cacheStatus,
      index: index.fd, indexStatus: index.status, unfollowedPath: unfollowedPath,
      watch: watch, validated: nil)
  }
}
