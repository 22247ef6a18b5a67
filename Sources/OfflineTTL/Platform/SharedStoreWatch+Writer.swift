import Synchronization

/// The change watch as a writer under its exclusive lock uses it (`FileClockMarkStore.observeKept`):
/// a view made after the lock was taken, and, after the write, the drain of the write's own
/// events.
extension SharedStoreWatch {
  /// A view made now, with a `poll` of its own (``view(_:)`` after forgetting the scope's view):
  /// the caller holds the mark store's exclusive lock, and only a `poll` made after the lock was
  /// taken covers every change an earlier holder made (a sign-in's rename, another process's
  /// write). A view made earlier in the gate's check, before the lock, would not.
  func writerView(_ system: Syscalls) -> View? {
    forgetView()
    return view(system)
  }

  /// Right after the caller's `pwrite` of `written` (before its `fdatasync`, still under the
  /// exclusive lock), reads the watch once (``StoreChangeWatch/drainOnce(_:ownWrite:path:proving:)``)
  /// and counts what it found as a drain (every store that tagged a read with an earlier count
  /// takes its full check next time, as after any event).
  ///
  /// - Returns: The drain count after it, when the watch has not drained anything since
  ///   `view` (so every event queued since is in this read) and what it read was the write's
  ///   own events and nothing else: once its `fdatasync` returns, the record as written is
  ///   what the files hold, as of this count. `nil` otherwise (the events were another store's to see, a change came from
  ///   elsewhere, or another `poll` drained in between).
  func drainOwnWrite(
    _ system: Syscalls, since view: View, of written: StoreChangeWatch.WrittenFile
  ) -> UInt64? {
    state.withLock { state -> UInt64? in
      guard !state.failed, state.changes == view.changes else { return nil }
      switch watch.drainOnce(
        system, ownWrite: written, path: state.path, proving: state.pathProves)
      {
      case .failed:
        state.failed = true
        state.view = nil
        return nil
      case .empty:
        return nil
      case .events(let onlyOwnWrite, let pathMoved):
        state.changes &+= 1
        state.view = nil
        if pathMoved, state.pathProves, let path = state.path {
          path.close(system)
          state.pathProves = false
        }
        return onlyOwnWrite ? state.changes : nil
      }
    }
  }
}
