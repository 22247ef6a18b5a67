import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What tells a ``FileSealingKeyProvider`` that the key file it remembers is still the one its
/// path names, unchanged, without a system call on the path: a change watch
/// (``StoreChangeWatch``, one inotify descriptor) of the key file and of every directory from
/// the root down to the key's, and the process's mount table, both asked by one `poll` that
/// never waits.
///
/// What a remembered key relied on before was one `lstat` of the path per load: the same file
/// (device, inode), unchanged in kind, owner, mode, size and times. The watch reports every way
/// that answer can change:
///
/// - the key file itself: written or truncated (`IN_MODIFY`), `chmod`, `chown`, a link added
///   or removed, times set (`IN_ATTRIB`), renamed (`IN_MOVE_SELF`) or removed
///   (`IN_DELETE_SELF`). Another file renamed over the key's name, or the key unlinked, drops
///   the key file's link count: `IN_ATTRIB`.
/// - each directory on the path (the key's, up to `/`): moved, removed, or its mode or owner
///   changed (``StoreChangeWatch/addAncestor(_:_:)``). A name on the path can only come to mean
///   another directory after the one it named was moved or removed.
/// - a mount or unmount anywhere in this process's mount namespace (`/proc/self/mountinfo`
///   raises `POLLPRI`), which is how a bind mount over the key file or a directory above it
///   would change what the path names without any inotify event.
///
/// **One-shot.** The first `poll` that finds a change (an event about a watched file or
/// directory itself, a mount change, an error) marks the watch changed for good; the provider
/// then forgets the key and reads the file again (a new watch is set up with that read). Events
/// about entries of a directory on the path are drained and ignored (``drainFindsChange()``).
/// The mark is taken under a lock together with the `poll` and the drain, so a concurrent load
/// never reads "unchanged" from an event or a mount-table change that another load consumed.
///
/// **Set up after the read that it covers** (``watch(_:key:path:status:)``), with the key file
/// still open: the key file's watch is added through `/proc/self/fd/N`, so it is the very file
/// that was read; each directory is opened from the root one name at a time without following
/// a link and watched through its descriptor; then every name on the path is looked up again
/// (`fstatat`) and must still lead to the watched directory, and the key's name to a file whose
/// status equals the one read. A change before the watches were added shows in that check; a
/// change after, as an event. Paths the watch cannot cover keep the `lstat` per load: a
/// relative path (the working directory can change), a path through a symbolic link or with
/// `.` or `..`, a file system where inotify does not see every change (network file systems:
/// ``StoreChangeWatch/localFileSystems``), a directory on a file system where a directory can
/// leave its path unreported (btrfs, where a subvolume deleted above the key sends no event:
/// ``PathWatch/fileSystems``, the allow-list the store's path watch uses), a platform without
/// inotify or `/proc`.
///
/// **Joined to a store's poll.** In a gate's check (``StoreCheckScope``) the sealed item store
/// has its shared change watch (``SharedStoreWatch``) poll this watch's two descriptors in the
/// same `poll` as its own (``JoinedChangeWatch``), so a repeated check makes one `poll` for the
/// store and the key. What that `poll` found is taken here at once (a change drained and
/// marked, as by a `poll` of this watch's own), and an answer of "unchanged" is kept for that
/// scope only, with the effective user the same check read: the key's load later in the scope
/// is given it without a system call. Outside a scope, and in a scope whose poll did not
/// include this watch, a load polls for itself.
final class KeyFileWatch: JoinedChangeWatch {
  private let watch: StoreChangeWatch
  private let mountTable: FileDescriptor
  private let system: Syscalls

  private struct State {
    /// Whether a `poll` found a change (taken together with the `poll`): for good.
    var changed = false
    /// The check scope whose joined `poll` found nothing, and the effective user read with it.
    var joined: (scope: UInt64, user: UInt32)? = nil
  }

  private let state = Mutex(State())

  private init(watch: StoreChangeWatch, mountTable: FileDescriptor, system: Syscalls) {
    self.watch = watch
    self.mountTable = mountTable
    self.system = system
  }

  deinit {
    watch.close(system)
    system.closeIgnoringErrors(mountTable)
  }

  /// The effective user, when nothing the key's path depends on changed since the watch was
  /// set up; `nil` once a change was found. In the check scope whose joined `poll` found
  /// nothing (``withJoinedPoll(scope:user:_:)``), that answer and its user, without a
  /// system call; otherwise one `poll` of the watch and the mount table, and one `geteuid`.
  ///
  /// - Complexity: O(1): at most one `poll`, never waiting, and one `geteuid`.
  func unchangedUser() -> UInt32? {
    let scope = StoreCheckScope.current
    return state.withLock { state -> UInt32? in
      if state.changed { return nil }
      if scope != 0, let joined = state.joined, joined.scope == scope { return joined.user }
      let found: (input: Bool, mountsChanged: Bool)
      do throws(Errno) {
        found = try system.pollWatchAndMounts(watch.fd, mountTable: mountTable)
      } catch {
        found = (true, true)
      }
      if found.mountsChanged || (found.input && drainFindsChange()) { state.changed = true }
      return state.changed ? nil : system.effectiveUserID()
    }
  }

  /// Whether nothing the key's path depends on changed (``unchangedUser()``).
  func isUnchanged() -> Bool { unchangedUser() != nil }

  /// See ``JoinedChangeWatch/withJoinedPoll(scope:user:_:)``: input on the watch is drained
  /// and judged as by ``unchangedUser()``; a mount-table change, or anything but input on the
  /// watch (an error, a failed `poll`), is a change. "Unchanged" is kept for `scope` (not
  /// outside a scope) with `user`.
  func withJoinedPoll<Found>(
    scope: UInt64, user: UInt32,
    _ poll: (_ watch: FileDescriptor, _ mounts: FileDescriptor) -> (
      found: Found, watch: Int16, mounts: Int16
    )
  ) -> Found {
    state.withLock { state -> Found in
      let polled = poll(watch.fd, mountTable)
      state.joined = nil
      if state.changed { return polled.found }
      let input = polled.watch & Int16(POLLIN) != 0
      if polled.watch & ~Int16(POLLIN) != 0 || polled.mounts != 0 || (input && drainFindsChange()) {
        state.changed = true
      } else if scope != 0 {
        state.joined = (scope, user)
      }
      return polled.found
    }
  }

  /// Reads the queued events until none is left: whether one is about a watched file or
  /// directory itself (no name: the key file, or a directory on the path moved, removed or
  /// `chmod`ed; a queue overflow too). An event that names an entry is about something inside a
  /// directory on the path (an ancestor's watch reports its entries' attributes too), which the
  /// path does not depend on: each name it does depend on is watched itself. So a busy
  /// directory above the key (`/tmp`, a home directory) does not send every load to the file.
  /// A failed read is a change.
  private func drainFindsChange() -> Bool {
    withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer -> Bool in
      var found = false
      while true {
        let count: Int
        do throws(Errno) {
          count = try system.read(watch.fd, into: buffer)
        } catch  where error == .wouldBlock {
          return found
        } catch {
          return true
        }
        guard count > 0 else { return true }
        // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[len]; }
        var offset = 0
        while offset + 16 <= count {
          let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
          if length == 0 { found = true }
          offset += 16 + length
        }
      }
    }
  }

  /// Sets up the watch of the key file open as `key` (read with status `status`) at `path`,
  /// or returns `nil` where none can be relied on (the type's discussion says which paths).
  ///
  /// - Complexity: O(d) for d directories on the path: an open, an `inotify_add_watch` and an
  ///   `fstatat` each.
  static func watch(_ system: Syscalls, key: FileDescriptor, path: String, status: FileStatus)
    -> KeyFileWatch?
  {
    #if os(Linux)
      guard path.hasPrefix("/") else { return nil }
      let names = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
      guard let last = names.last, !names.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
      else { return nil }
      guard let watch = StoreChangeWatch.open(system, watching: [key]) else { return nil }
      // From here on, any change to the key file is an event (the descriptor is the file read).
      var directories: [FileDescriptor] = []
      defer { directories.forEach { system.closeIgnoringErrors($0) } }
      // Each directory must be on a file system where it can leave its path only by a change
      // its watch or the mount table reports (not btrfs: a subvolume deleted above the key
      // reports nothing); a failing `fstatfs` counts as not.
      func local(_ fd: FileDescriptor) -> Bool {
        guard let type = try? system.fileSystemType(fd) else { return false }
        return PathWatch.proves(onFileSystem: type)
      }
      guard let root = try? system.open("/", [.readOnly, .directory, .nonBlocking]) else {
        watch.close(system)
        return nil
      }
      directories.append(root)
      for name in names.dropLast() {
        guard
          let next = try? system.openat(
            directories[directories.count - 1], String(name), [.readOnly, .directory, .nonBlocking])
        else {
          watch.close(system)
          return nil
        }
        directories.append(next)
      }
      guard directories.allSatisfy({ local($0) && watch.addAncestor(system, $0) }),
        let mountTable = try? system.openSystemFile("/proc/self/mountinfo")
      else {
        watch.close(system)
        return nil
      }
      let keyWatch = KeyFileWatch(watch: watch, mountTable: mountTable, system: system)
      // Every name still leads where the watches are: a change before they were added shows
      // here, one after them as an event (or a mount-table change).
      for (index, name) in names.dropLast().enumerated() {
        guard let found = try? system.fstatat(directories[index], String(name)),
          let watched = try? system.fstat(directories[index + 1]),
          found.device == watched.device, found.inode == watched.inode
        else { return nil }
      }
      guard (try? system.fstatat(directories[directories.count - 1], String(last))) == status
      else { return nil }
      return keyWatch
    #else
      return nil
    #endif
  }
}
