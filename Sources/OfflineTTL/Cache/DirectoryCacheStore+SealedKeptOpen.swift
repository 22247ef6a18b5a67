import Synchronization

/// What a long-lived sealed store's last full kept check served: the verified index header's
/// summary and binding, the effective user, and the subkeys the header's MAC was verified with.
/// Immutable, and a class: a repeated check hands it on with one reference count.
final class SealedKeptSummary: Sendable {
  let summary: ItemTimeSummary
  let binding: MarkBinding
  let user: UInt32
  /// The subkeys whose ``SealKeys/index`` verified the header: a later check with another key
  /// verifies again.
  let keys: SealKeys

  init(summary: ItemTimeSummary, binding: MarkBinding, user: UInt32, keys: SealKeys) {
    self.summary = summary
    self.binding = binding
    self.user = user
    self.keys = keys
  }
}

extension DirectoryCacheStore {
  /// ``summaryIfSettledDeferringBinding()`` of a long-lived sealed store through the descriptors
  /// it keeps open (the store directory, `cache/` and the index, as an unsealed store keeps them:
  /// `keptSummary()`), or `nil` when the caller must take the full path, which then does exactly
  /// what it did before.
  ///
  /// The key is the operation's, as the full path loads it (inside an operation's
  /// ``SealingKeyScope``, the key it loaded first; a remembered key file: one `poll` of its
  /// watch, or one `lstat` where its path is not watched); a key that cannot be had sends the
  /// call to the full path, which reports it. In a gate's check (``StoreCheckScope``), the
  /// store's shared watch polls the key file's watch in its own `poll` (``JoinedChangeWatch``),
  /// and the subkeys this store value resolved from that key before (``ResolvedSealKeys``) are
  /// taken while that `poll` found nothing: no system call and no lookup of the provider's.
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
  /// effective user, and the same key (the same subkeys, ``SealKeys/isSame(as:)``): the header
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
    guard let name = sealingScopeName else { return nil }
    let sys = files.sys
    // The subkeys this store value resolved before, with the remembered key file's watch. In a
    // check, the store's watch polls that watch with its own: one `poll` (and one `geteuid`)
    // for both, and the key's load then makes no system call.
    let resolved = resolvedSealKeys?.current
    let keyWatch =
      StoreCheckScope.current != 0 ? resolved?.watch ?? resolvedSealKeys?.memory.watch : nil
    if let served = Self.servedAgain(
      kept, sys, name: name, resolved: resolved, joining: keyWatch)
    {
      // Outside the lock: a test's hook may run a sign-in through this very store value.
      reachSealedRead(.afterDeferredIndex)
      return (served.summary, served.binding)
    }
    // Keys loaded from the provider, outside the lock, when none were at hand in it.
    var loaded: SealKeys? = nil
    for _ in 0..<2 {
      let step = kept.state.withLock { state -> KeptSealedStep in
        switch state {
        case .unused:
          return .fullPath
        case .used:
          guard let opened = openKept() else {
            state = .unused
            return .fullPath
          }
          state = .kept(opened)
        case .kept: break
        }
        guard case .kept(var files) = state else { return .fullPath }
        let view = files.watch?.view(sys, joining: keyWatch)
        // The operation's key, as the full path loads it: the key this scope loaded first, or
        // the subkeys resolved before while they are what the provider would load (after the
        // joined `poll`, without a system call); else loaded outside this lock.
        guard
          let keys = loaded
            ?? SealingKeyScope.keys(named: name, ifNoneKept: { resolved?.keysIfUnchanged })
        else { return .needsKeys }
        if let view, view.isKeptDirectory, let validated = files.sealedValidated,
          validated.changes == view.changes, view.user == validated.checked.user,
          validated.checked.keys.isSame(as: keys)
        {
          return .served(validated.checked)
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
          return .served(checked)
        case .fullPath:
          return .fullPath
        case .replaced:
          files.close(sys)
          state = .used
          return .fullPath
        }
      }
      switch step {
      case .served(let served):
        // Outside the lock: a test's hook may run a sign-in through this very store value.
        reachSealedRead(.afterDeferredIndex)
        return (served.summary, served.binding)
      case .fullPath:
        return nil
      case .needsKeys:
        // A key that cannot be had: the full path reports it.
        guard loaded == nil, let keys = try? sealKeys(creating: false) else { return nil }
        loaded = keys
      }
    }
    return nil
  }

  /// The repeated check's path: the summary the last full kept check served, while the view
  /// (one `poll` for the store and, in a check, `joining` the key file's watch) reports no
  /// change since, the same effective user, and the same key; else `nil` (the caller looks
  /// again with every check). The key is the operation's: the key its scope loaded first, or
  /// `resolved`'s subkeys while they are what the provider would load. Static, so that it
  /// copies nothing of the store value.
  ///
  /// - Complexity: O(1): the view (at most one `poll`, one `lstat`, one `geteuid`) and the
  ///   comparisons.
  private static func servedAgain(
    _ kept: KeptCacheFiles, _ sys: Syscalls, name: SealingKeyScope.Name,
    resolved: ResolvedSealKeys.Resolved?, joining keyWatch: KeyFileWatch?
  ) -> SealedKeptSummary? {
    kept.state.withLock { state -> SealedKeptSummary? in
      guard let (watch, validated) = state.sealedReuse,
        let view = watch.view(sys, joining: keyWatch), view.isKeptDirectory,
        validated.changes == view.changes,
        view.user == validated.checked.user,
        let keys = SealingKeyScope.keys(named: name, ifNoneKept: { resolved?.keysIfUnchanged }),
        validated.checked.keys.isSame(as: keys)
      else { return nil }
      return validated.checked
    }
  }

  private enum KeptSealedStep {
    case served(SealedKeptSummary)
    /// The caller takes the full path.
    case fullPath
    /// No key at hand inside the lock: load it outside and look again.
    case needsKeys
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
        user: sys.effectiveUserID(), keys: keys))
  }
}

extension KeptState where Kept == KeptCacheDescriptors {
  /// The kept set's watch and the summary its last full sealed check served, read through a
  /// borrow of the set: a repeated check copies these two, not the whole descriptor set (its
  /// paths, statuses and summaries, a dozen reference counts).
  var sealedReuse:
    (watch: SharedStoreWatch, validated: (checked: SealedKeptSummary, changes: UInt64))?
  {
    guard case .kept(let files) = self, let watch = files.watch,
      let validated = files.sealedValidated
    else { return nil }
    return (watch, validated)
  }
}
