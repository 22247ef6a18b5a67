import Synchronization

/// What a long-lived sealed store's last full kept check served: the verified index header's
/// summary and binding, the effective user, and the index subkey the header's MAC was verified
/// with.
struct SealedKeptSummary: Sendable {
  let summary: ItemTimeSummary
  let binding: MarkBinding
  let user: UInt32
  /// The subkey (``SealKeys/index``) that verified the header: a later check with another key
  /// verifies again.
  let indexKey: [UInt8]
}

extension DirectoryCacheStore {
  /// ``summaryIfSettledDeferringBinding()`` of a long-lived sealed store through the descriptors
  /// it keeps open (the store directory, `cache/` and the index, as an unsealed store keeps them:
  /// `keptSummary()`), or `nil` when the caller must take the full path, which then does exactly
  /// what it did before.
  ///
  /// The key is loaded first (a remembered key file: one `poll` of its watch, or one `lstat`
  /// where its path is not watched; inside an operation's ``SealingKeyScope``, the operation's
  /// key), as the full path loads it; a key that cannot be had sends the call to the full path,
  /// which reports it. In a gate's check (``StoreCheckScope``), the store's shared watch polls
  /// the key file's watch in its own `poll` first (``JoinedChangeWatch``), so the load makes no
  /// system call of its own.
  ///
  /// **The full kept check** (without a change watch, and with one whenever it reports a
  /// change): the checks of the unsealed kept read (`lstat` of the store path: the directory
  /// kept open, this user's, writable by nobody else; `fstatat` of `cache`: the one kept open;
  /// no `pending`; `fstatat` of `index`: the very file kept open, unchanged in every field),
  /// then `items/` as the full path checks it (this user's, writable by nobody else), then the
  /// 128-byte sealed header read through the kept descriptor and verified with the key (MAC).
  /// An empty index, or a header that does not verify, takes the full path (which refuses it
  /// or judges the empty set); a replaced file or directory also closes the kept descriptors.
  ///
  /// **With a change watch** (``StoreChangeWatch``, a store on a local file system): when the
  /// watch reports nothing since the last full kept check, that check's summary and binding are
  /// served again after one `lstat` of the store path (still the directory kept open), the same
  /// effective user, and the same key (its index subkey compared in constant time): the header
  /// bytes did not change, so their MAC under that key need not be computed again. Any event
  /// drains the watch and takes the full kept check. The binding is confirmed against the mark
  /// record observed under its lock, as the full path's is, so a sign-in that committed since
  /// is seen there.
  ///
  /// - Returns: The summary and the mark binding it requires, or `nil`.
  /// - Complexity: With the watch and no change: one `poll` (for the store and a watched key
  ///   file together), one `lstat` (none with the path watch), one `geteuid`. Otherwise:
  ///   `lstat`, 4 `fstatat`, one 128-byte `pread` and one MAC.
  func keptSealedSummaryDeferringBinding()
    -> (summary: ItemTimeSummary, requiredMark: MarkBinding?)?
  {
    guard sealing != nil else { return nil }
    let sys = files.sys
    // In a check, the store's watch polls the remembered key file's watch with its own: one
    // `poll` (and one `geteuid`) for both, and the key load below makes no system call.
    if StoreCheckScope.current != 0, let keyWatch = keyMemory?.watch,
      let shared = kept.state.withLock({ state -> SharedStoreWatch? in
        guard case .kept(let files) = state else { return nil }
        return files.watch
      })
    {
      _ = shared.view(sys, joining: keyWatch)
    }
    guard let keys = try? sealKeys(creating: false) else { return nil }
    let served = kept.state.withLock { state -> SealedKeptSummary? in
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
      if let view, view.isKeptDirectory, let validated = files.sealedValidated,
        validated.changes == view.changes, view.user == validated.checked.user,
        Sodium.equalInConstantTime(validated.checked.indexKey, keys.index)
      {
        return validated.checked
      }
      if files.sealedValidated != nil {
        files.sealedValidated = nil
        state = .kept(files)
      }
      files.watch?.forgetView()
      switch readKeptSealed(files, keys: keys) {
      case .summary(let checked):
        if let view {
          files.sealedValidated = (checked, view.changes)
          state = .kept(files)
        }
        return checked
      case .fullPath:
        return nil
      case .replaced:
        files.close(sys)
        state = .used
        return nil
      }
    }
    guard let served else { return nil }
    // Outside the lock: a test's hook may run a sign-in through this very store value.
    reachSealedRead(.afterDeferredIndex)
    return (served.summary, served.binding)
  }

  private enum KeptSealedRead {
    case summary(SealedKeptSummary)
    /// The full path this time; the descriptors are still the right ones.
    case fullPath
    /// A directory or the index is not the one kept open, or fails its checks: close them.
    case replaced
  }

  private func readKeptSealed(_ kept: KeptCacheDescriptors, keys: SealKeys) -> KeptSealedRead {
    let sys = files.sys
    switch checkKeptFiles(kept) {
    case .replaced: return .replaced
    case .fullPath: return .fullPath
    case .checked: break
    }
    // `items/` as the full path checks it: another user's, or writable by others, is refused
    // there.
    guard (try? itemsStamp(kept.cache)) != nil else { return .fullPath }
    var bytes = [UInt8](repeating: 0, count: CacheSeal.indexHeaderSize)
    guard (try? sys.preadAll(kept.index, into: &bytes, at: 0)) == CacheSeal.indexHeaderSize,
      case .success(let header) = CacheSeal.decodeIndexHeader(bytes, keys: keys),
      header.summary.count > 0
    else { return .fullPath }
    return .summary(
      SealedKeptSummary(
        summary: header.summary,
        binding: MarkBinding(generation: header.generation, storeID: header.storeID),
        user: sys.effectiveUserID(), indexKey: keys.index))
  }
}
