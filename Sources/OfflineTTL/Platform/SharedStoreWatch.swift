import Synchronization

/// One change watch (``StoreChangeWatch``: one inotify descriptor) shared by every long-lived
/// store of this process over one store directory (the item store and the mark store of a gate
/// keep their own descriptors but add their watches to this one), with the one check a repeated
/// read of any of them makes before it reuses its last fully checked read: one `poll` of the
/// watch, one `lstat` of the store path (none while the path watch, ``PathWatch``, proves that
/// the path still names the store directory), one `geteuid`.
///
/// **Counting drains.** Each `poll` that finds events drains them and, when one of them is about
/// the store (not a neighbour's, in a directory above it: ``PathWatch``), adds one to
/// ``State/changes``, under the same lock. A store tags each read it fully checked with the
/// count a `poll` gave *before* that read, and reuses the read only while a later `poll` still
/// gives that count: no event was queued for any watched file or directory from the drain that
/// preceded the read until that `poll`, so the read is what a new one would find then. Which
/// store drained an event does not matter: the count moved for every store. An event for one
/// store's file also sends the other store to its full check (correct, only slower).
///
/// **One check for the stores of one operation.** Inside a ``StoreCheckScope`` (the gate's
/// check), the first store that asks makes the `poll`, the `lstat` and the `geteuid`, and every
/// later store of the same scope is given the same ``View`` without a system call. A read reused
/// under that view is what a read at that `poll` would have found; the clocks are read after
/// every store was read, so the check is as if both stores had been read at that `poll`. A full
/// check by any store forgets the view, so a scope that reads a store again after a change (the
/// gate's retries) polls again. Outside a scope, every call polls.
final class SharedStoreWatch: Sendable {
  /// What names the watched store: the store directory's device and inode when the stores
  /// opened it, and the path they `lstat` (``DirectoryCacheStore/unfollowedPath(_:)``).
  struct Key: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
    let path: String
  }

  /// What one `poll` (with its `lstat` and `geteuid`) found.
  struct View: Sendable, Equatable {
    /// The scope it was made in (`0`: none).
    let scope: UInt64
    /// ``State/changes`` after the `poll`.
    let changes: UInt64
    /// The effective user id.
    let user: UInt32
    /// Whether the store path names the directory kept open (the path watch, else `lstat`;
    /// `false`, without the `lstat`, when the `poll` found events).
    let isKeptDirectory: Bool
  }

  struct State: Sendable {
    /// The watch failed: every store takes its full check from now on.
    var failed = false
    /// How many `poll`s found events (and drained them).
    var changes: UInt64 = 0
    /// The view of the current scope, if one was made in it.
    var view: View? = nil
    /// The watch of the directories above the store (``PathWatch``), `nil` where it could not
    /// be set up; kept after it ended, so that its directories' events are still told apart.
    var path: PathWatch? = nil
    /// Whether the path watch proves that the store path names the store directory (no `lstat`
    /// in a view); `false` (the `lstat` of every view) once an event may have moved it.
    var pathProves = false
  }

  let key: Key
  let watch: StoreChangeWatch
  /// The seam the watch was opened through (its descriptor is closed through it).
  let system: Syscalls
  let state = Mutex(State())

  private init(key: Key, watch: StoreChangeWatch, path: PathWatch?, system: Syscalls) {
    self.key = key
    self.watch = watch
    self.system = system
    state.withLock {
      $0.path = path
      $0.pathProves = path != nil
    }
  }

  deinit {
    let proving = state.withLock { $0.pathProves ? $0.path : nil }
    proving?.close(system)
    watch.close(system)
  }

  private struct Entry: @unchecked Sendable {
    weak var watch: SharedStoreWatch?
  }

  /// The shared watches by store, each held (strongly) only by the stores that use it.
  private static let registry = Mutex<[Key: Entry]>([:])

  /// The shared watch of the store directory `directory` (open, `status` its `fstat`) named by
  /// `path`, with watches of `descriptors` and of the subdirectories `subdirectories` of
  /// `parent` added to it (set up before the caller's first full check of what they watch);
  /// a new one when none is in use (or the one in use failed). `nil` where no watch can be
  /// relied on (``StoreChangeWatch/open(_:watching:subdirectories:in:)``).
  ///
  /// - Complexity: O(stores in use in this process) for the lookup, plus one
  ///   `inotify_add_watch` per descriptor and subdirectory.
  static func join(
    _ system: Syscalls, path: String, directory: FileDescriptor, status: FileStatus,
    watching descriptors: [FileDescriptor], subdirectories: [String] = [],
    in parent: FileDescriptor? = nil
  ) -> SharedStoreWatch? {
    if let faults = system.faults, !faults.allowsChangeWatch { return nil }
    let key = Key(device: status.device, inode: status.inode, path: path)
    return registry.withLock { entries -> SharedStoreWatch? in
      if let shared = entries[key]?.watch, !shared.state.withLock({ $0.failed }) {
        guard
          shared.watch.add(
            system, watching: descriptors, subdirectories: subdirectories, in: parent,
            device: status.device)
        else { return nil }
        return shared
      }
      entries = entries.filter { $0.value.watch != nil }
      guard
        let watch = StoreChangeWatch.open(
          system, watching: [directory] + descriptors, subdirectories: subdirectories, in: parent)
      else { return nil }
      // Before the first view: the path is checked after the path watch is in place.
      let pathWatch = PathWatch.arm(
        system, in: watch, path: path, directory: directory, device: status.device,
        inode: status.inode)
      let shared = SharedStoreWatch(key: key, watch: watch, path: pathWatch, system: system)
      entries[key] = Entry(watch: shared)
      return shared
    }
  }

  /// This scope's view (``StoreCheckScope/current``): the one already made in it, or a new one
  /// (one `poll`, draining any events; when it found none, or only events of neighbours in the
  /// directories above the store, one `lstat` of the store path unless the path watch proves
  /// it; one `geteuid`). `nil` once the watch has failed.
  ///
  /// - Parameter joined: A watch to poll in the same `poll` (the sealing key file's,
  ///   ``JoinedChangeWatch``), when this call makes one; told what it found, with this view's
  ///   scope and user.
  func view(_ system: Syscalls, joining joined: (any JoinedChangeWatch)? = nil) -> View? {
    let scope = StoreCheckScope.current
    return state.withLock { state -> View? in
      if state.failed { return nil }
      if scope != 0, let view = state.view, view.scope == scope { return view }
      var isKeptDirectory = false
      // Read before the `poll` so that a joined watch is given it with what the `poll` found.
      let user = system.effectiveUserID()
      switch watch.poll(
        system, path: state.path, proving: state.pathProves, joining: joined, scope: scope,
        user: user)
      {
      case .failed:
        state.failed = true
        state.view = nil
        return nil
      case .changed(let pathMoved):
        state.changes &+= 1
        if pathMoved, state.pathProves, let path = state.path {
          path.close(system)
          state.pathProves = false
        }
      case .unchanged:
        if state.pathProves, system.faults?.allowsPathWatch ?? true {
          // No event since the path watch checked the path: it names the same directory. (A
          // store whose fault plan does not allow the path watch makes its `lstat` regardless
          // of which store set the watch up.)
          isKeptDirectory = true
        } else if let directory = try? system.lstat(key.path) {
          isKeptDirectory =
            directory.kind == .directory && directory.device == key.device
            && directory.inode == key.inode
        }
      }
      let view = View(
        scope: scope, changes: state.changes, user: user, isKeptDirectory: isKeptDirectory)
      state.view = scope == 0 ? nil : view
      return view
    }
  }

  /// Forgets this scope's view (a store took its full check): the next read in the scope polls
  /// again.
  func forgetView() {
    state.withLock { $0.view = nil }
  }
}
