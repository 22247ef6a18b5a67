#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The directories above a store directory, watched in a store's change watch
/// (``SharedStoreWatch``) so that a repeated read knows, without an `lstat` of the store path,
/// that the path still names the store directory kept open.
///
/// **What it proves.** When it is set up, every directory on the store path (from `/` down to
/// the store directory's parent, each opened by name in the one above it without following a
/// link) gets a watch of its own inode for `IN_MOVE_SELF`, `IN_DELETE_SELF` and `IN_ATTRIB`
/// (not for names created, removed or renamed in it: a busy parent such as `/tmp` reports
/// nothing), and the store directory already has one for every event. Only then does it check, name by name, that each
/// name still names the directory watched, down to the store directory kept open. A path of
/// directories names another directory only once one of them is renamed (`rename`, `renameat2`
/// with `RENAME_EXCHANGE`: each moved directory gets `IN_MOVE_SELF`), removed (`IN_DELETE_SELF`)
/// or covered by a mount. So while no such event was read, and the mount table reported no
/// change (`/proc/self/mountinfo` polled in the same `poll`), the path names what it named at
/// that check. A change of an ancestor's owner or mode (which could make the path unusable to
/// this user) is an `IN_ATTRIB`. Any of these, or a queue overflow, ends the path watch for
/// good: every later repeated read makes its `lstat` again, as a store without a path watch
/// does. inotify also reports an `IN_ATTRIB` of any entry *in* a watched directory (a `chmod`
/// or `touch` of a neighbour in `/tmp` or a home directory): such an event names the entry, and
/// is ignored (``classify(_:)``): the path depends on no entry of a directory above the store
/// but the next directory of the path, which is watched itself and reports its own change
/// without a name. A busy directory above the store thus neither ends the path watch nor sends
/// a repeated read to its full check.
///
/// Only for an absolute path without `..` whose directories (and the store directory) are all on
/// file systems where every removal or rename of a directory reaches its watch
/// (``fileSystems``: not btrfs, where deleting a subvolume above the store reports nothing to any
/// watch and changes no mount) and can be watched by this user; a relative path (the
/// working directory can change) or a path through a symbolic link keeps the `lstat`. Not
/// covered: this process changing its own root directory (`chroot`) or mount namespace
/// (`unshare`, `setns`) after the path watch was set up.
struct PathWatch: Sendable {
  /// `/proc/self/mountinfo`, open: `poll` reports a change of this process's mounts on it.
  let mounts: FileDescriptor
  /// `f_type` of the file systems where a directory can leave its path only by a rename, a
  /// removal or a mount, each of which the path watch sees: ext2/3/4 (`0xEF53`), XFS
  /// (`0x58465342`), tmpfs (`0x01021994`). Not btrfs: `btrfs subvolume delete` of a subvolume
  /// above the store sends no inotify event and changes no mount.
  static let fileSystems: Set<Int64> = [0xEF53, 0x5846_5342, 0x0102_1994]

  /// Whether the path watch may rely on a directory on the file system of type `type`
  /// (``fileSystems``).
  static func proves(onFileSystem type: Int64) -> Bool { fileSystems.contains(type) }

  /// The watch descriptors of the directories above the store directory.
  let ancestors: [Int32]
  /// The watch descriptor of the store directory.
  let store: Int32

  #if os(Linux)
    /// What a directory above the store is watched for: itself renamed, removed, or its owner,
    /// mode or times changed.
    static let ancestorEvents: UInt32 =
      UInt32(IN_MOVE_SELF) | UInt32(IN_DELETE_SELF) | UInt32(IN_ATTRIB) | UInt32(IN_ONLYDIR)
    /// Events of the store directory's own watch that move or remove the directory itself.
    static let storeMoves: UInt32 =
      UInt32(IN_MOVE_SELF) | UInt32(IN_DELETE_SELF) | UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)
  #endif

  /// Sets up the path watch of the store directory `directory` (open; `device` and `inode` its
  /// identity) named by the absolute path `path`, in `watch`; `nil` where it cannot be relied on
  /// (see the type's description). Watches added before a check that failed stay in `watch`
  /// (they only report more changes).
  ///
  /// - Complexity: One `open` of the mount table, and per directory on the path an `openat`
  ///   (`O_PATH`), an `fstatfs`, an `inotify_add_watch`, an `fstatat`, an `fstat` and a `close`.
  static func arm(
    _ system: Syscalls, in watch: StoreChangeWatch, path: String, directory: FileDescriptor,
    device: UInt64, inode: UInt64
  ) -> PathWatch? {
    #if os(Linux)
      if let faults = system.faults, !faults.allowsPathWatch { return nil }
      guard path.hasPrefix("/") else { return nil }
      var names = path.split(separator: "/").filter { $0 != "." }.map(String.init)
      guard let storeName = names.popLast(), !names.contains("..") else { return nil }
      guard let mounts = try? system.openSystemFile("/proc/self/mountinfo") else { return nil }
      var directories: [FileDescriptor] = []
      var armed = false
      defer {
        for opened in directories { system.closeIgnoringErrors(opened) }
        if !armed { system.closeIgnoringErrors(mounts) }
      }
      guard let root = try? system.open("/", [.pathOnly, .directory]) else { return nil }
      directories.append(root)
      for name in names {
        guard
          let next = try? system.openat(
            directories[directories.count - 1], name, [.pathOnly, .directory])
        else { return nil }
        directories.append(next)
      }
      var ancestors: [Int32] = []
      for opened in directories {
        guard let type = try? system.fileSystemType(opened),
          proves(onFileSystem: type),
          let added = try? system.inotifyAddWatch(
            watch.fd, "/proc/self/fd/\(opened.rawValue)", mask: ancestorEvents)
        else { return nil }
        ancestors.append(added)
      }
      // The store directory is watched already (for every event): the same mask again gives
      // its watch descriptor.
      guard let type = try? system.fileSystemType(directory), proves(onFileSystem: type),
        let store = try? system.inotifyAddWatch(
          watch.fd, "/proc/self/fd/\(directory.rawValue)", mask: StoreChangeWatch.events)
      else { return nil }
      // Every watch is in place: a name that moves from now on is an event. Each name must
      // still name the directory watched, and the last one the store directory kept open.
      for (index, name) in names.enumerated() {
        guard let named = try? system.fstatat(directories[index], name),
          named.kind == .directory,
          let watched = try? system.fstat(directories[index + 1]),
          named.isSameFile(as: watched)
        else { return nil }
      }
      guard let named = try? system.fstatat(directories[directories.count - 1], storeName),
        named.kind == .directory, named.device == device, named.inode == inode
      else { return nil }
      armed = true
      return PathWatch(mounts: mounts, ancestors: ancestors, store: store)
    #else
      return nil
    #endif
  }

  /// What the inotify events in `events` (as `read` returned them) say.
  struct Events: Equatable {
    /// One of them is about the store: any event of a watch other than those of the
    /// directories above it, or a queue overflow (events were lost).
    var storeChanged = false
    /// One of them may have moved the store path off the store directory: an event of a
    /// directory above the store about that directory itself (no name), the store directory
    /// itself moved, removed or unmounted, or a queue overflow.
    var pathMoved = false
  }

  /// Sorts the inotify events in `events`: an event of a directory above the store that names
  /// an entry (a neighbour's `IN_ATTRIB`) is neither a change of the store nor a move of the
  /// path, and is ignored (``Events``). With `proving` `false` (the path watch ended: every
  /// read makes its `lstat`), every event of a directory above the store is ignored.
  ///
  /// - Complexity: O(events × directories on the path).
  static func classify(
    _ events: UnsafeRawBufferPointer, ancestors: [Int32], store: Int32, proving: Bool
  ) -> Events {
    var found = Events()
    #if os(Linux)
      let header = 16  // struct inotify_event { int wd; uint32_t mask, cookie, len; name }
      var offset = 0
      while offset < events.count {
        guard offset + header <= events.count else {
          found.storeChanged = true
          found.pathMoved = true
          return found
        }
        let watched = events.loadUnaligned(fromByteOffset: offset, as: Int32.self)
        let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
        let length = events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
        offset += header + Int(length)
        if mask & (UInt32(IN_Q_OVERFLOW) | UInt32(IN_UNMOUNT)) != 0 {
          found.storeChanged = true
          found.pathMoved = true
        } else if ancestors.contains(watched) {
          if proving && length == 0 { found.pathMoved = true }
        } else {
          found.storeChanged = true
          if watched == store && mask & storeMoves != 0 { found.pathMoved = true }
        }
      }
    #else
      found.storeChanged = true
      found.pathMoved = true
    #endif
    return found
  }

  /// Closes the mount table (the watches go with the change watch's descriptor): when the path
  /// watch ends, or with the change watch.
  func close(_ system: Syscalls) {
    system.closeIgnoringErrors(mounts)
  }
}
