import Synchronization

/// A set of descriptors a long-lived store keeps open between operations (the cache store's
/// directory, `cache/` and index; the mark store's directory, record and lock file), with what
/// it checked about each when it opened them.
protocol KeptDescriptorSet: Sendable {
  /// Closes every descriptor of the set (errors ignored).
  func close(_ system: Syscalls)
}

/// Where a store value's kept descriptors stand.
enum KeptState<Kept: KeptDescriptorSet>: Sendable {
  /// No operation has completed yet: the next one takes the full path and keeps nothing (a
  /// one-shot process opens nothing beyond the full path's descriptors).
  case unused
  /// An operation completed: the next one that can use them opens and keeps the descriptors.
  case used
  /// The descriptors are open.
  case kept(Kept)
}

/// The descriptors a long-lived store keeps open for its repeated reads, shared by every copy of
/// one store value and closed when the last copy goes away. Both file stores use it
/// (`KeptCacheFiles`, `KeptMarkFiles`); each supplies its own set and its own checks.
final class KeptStoreFiles<Kept: KeptDescriptorSet>: Sendable {
  /// The state; every read through the kept descriptors runs under this lock, so copies of one
  /// store value on several threads never use a descriptor that another is closing.
  let state = Mutex<KeptState<Kept>>(.unused)
  /// The seam the descriptors were opened through.
  let system: Syscalls

  init(system: Syscalls) {
    self.system = system
  }

  deinit {
    state.withLock { state in
      if case .kept(let kept) = state { kept.close(system) }
    }
  }

  /// Notes that an operation completed (the next read may keep descriptors open).
  func noteUsed() {
    state.withLock { state in
      if case .unused = state { state = .used }
    }
  }

  /// Closes the kept descriptors; the next read opens them again.
  func drop() {
    state.withLock { state in
      if case .kept(let kept) = state {
        kept.close(system)
        state = .used
      }
    }
  }
}

extension FileStatus {
  /// Whether `other` names the same file (device and inode).
  func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }
}
