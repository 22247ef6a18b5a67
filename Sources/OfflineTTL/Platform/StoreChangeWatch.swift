#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One inotify descriptor (Linux) that a long-lived store keeps beside its kept descriptors, so
/// that a repeated read can learn with one `poll` that never waits that nothing in the store changed
/// since the last read it fully checked, and reuse that read's result instead of checking every
/// file again.
///
/// What it watches: the inodes of the descriptors it is given (through `/proc/self/fd/N`, so it
/// is the very file or directory that was opened and checked, whatever its name is later) and
/// named subdirectories of a watched directory (never following a link), for every event that
/// can change what a read would find: a write or truncation (`IN_MODIFY`), a change of owner,
/// mode, link count or times (`IN_ATTRIB`), a name created, removed or renamed in or out
/// (`IN_CREATE`, `IN_DELETE`, `IN_MOVED_FROM`, `IN_MOVED_TO`), and a watched file or directory
/// itself removed or renamed (`IN_DELETE_SELF`, `IN_MOVE_SELF`). A full queue (`IN_Q_OVERFLOW`)
/// is an event too. `IN_CLOSE_WRITE` is not asked for: every write through a descriptor is an
/// `IN_MODIFY` already, and other processes' locked reads open the mark record for writing and
/// close it without writing, which would send every repeated read to the full check. (A write
/// through a shared memory mapping reports nothing at all; no OfflineTTL store maps its files,
/// and a process of the same user that does can change the store in any way it likes.) The kernel queues an event during the system call that makes the change
/// (before a writer's `fdatasync`, and whichever process or name made it), so:
///
/// - *No event* (`poll` finds nothing to read) means: no watched file or directory changed since the events were
///   last drained. A read that was fully checked after that drain is still what a new read would
///   find, byte for byte and status for status.
/// - *Any event* is "changed": ``poll(_:)`` drains the queue before it returns, so a full check
///   made after it sees every change made before it, and any change after it shows up at the
///   next poll.
///
/// Only on local file systems (ext2/3/4, XFS, btrfs, tmpfs: `fstatfs`'s `f_type`), all on one
/// device: inotify does not see changes another machine makes on a network file system. Where
/// it is not available (another platform, another file system, no `/proc`, the per-user limit
/// of inotify instances reached), ``open(_:watching:subdirectories:in:)`` returns `nil` and the
/// store checks every file on every read as before.
///
/// The stores hold it through ``SharedStoreWatch``: one watch per store directory in a process,
/// to which both file stores add what they keep open.
struct StoreChangeWatch: Sendable {
  /// The inotify descriptor (non-blocking).
  let fd: FileDescriptor

  /// What a ``poll(_:)`` found.
  enum Poll: Sendable, Equatable {
    /// No event since the last drain.
    case unchanged
    /// Events were read and the queue drained; `pathMoved` when one of them (or a change of
    /// the mounts) may have moved the store path off the store directory (``PathWatch``).
    case changed(pathMoved: Bool)
    /// The descriptor failed: close the watch and check every file from now on.
    case failed
  }

  #if os(Linux)
    /// Every event that can change what a read finds.
    static let events: UInt32 =
      UInt32(IN_MODIFY) | UInt32(IN_ATTRIB) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
      | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE_SELF)
      | UInt32(IN_MOVE_SELF)
    static let subdirectoryOptions: UInt32 = UInt32(IN_DONT_FOLLOW) | UInt32(IN_ONLYDIR)
  #endif

  /// `f_type` of the file systems where every change is made by this machine's kernel and
  /// reported: ext2/3/4 (`0xEF53`), XFS (`0x58465342`), btrfs (`0x9123683E`), tmpfs
  /// (`0x01021994`).
  static let localFileSystems: Set<Int64> = [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994]

  /// Sets up a watch of the files and directories open as `descriptors` (each checked by the
  /// caller), and of the subdirectories `subdirectories` of the directory `parent` (names that
  /// are absent are skipped: the parent's watch sees them created).
  ///
  /// - Parameters:
  ///   - system: The seam (a ``SyscallFaultPlan`` that does not allow change watches gets `nil`).
  ///   - descriptors: Open files and directories, all on one local file system.
  ///   - subdirectories: Names of directories in `parent` to watch too.
  ///   - parent: One of `descriptors`, a directory.
  /// - Returns: The watch, or `nil` where no watch can be relied on.
  static func open(
    _ system: Syscalls, watching descriptors: [FileDescriptor], subdirectories: [String] = [],
    in parent: FileDescriptor? = nil
  ) -> StoreChangeWatch? {
    #if os(Linux)
      if let faults = system.faults, !faults.allowsChangeWatch { return nil }
      guard let first = descriptors.first,
        let type = try? system.fileSystemType(first), localFileSystems.contains(type),
        let device = try? system.fstat(first).device
      else { return nil }
      for fd in descriptors.dropFirst() {
        guard (try? system.fstat(fd).device) == device else { return nil }
      }
      guard let inotify = try? system.inotifyInit() else { return nil }
      let watch = StoreChangeWatch(fd: inotify)
      guard
        watch.add(
          system, watching: descriptors, subdirectories: subdirectories, in: parent,
          device: device, checkingDevices: false)
      else {
        watch.close(system)
        return nil
      }
      return watch
    #else
      return nil
    #endif
  }

  /// Adds watches of `descriptors` and of the subdirectories `subdirectories` of `parent` to
  /// this watch (``open(_:watching:subdirectories:in:)`` describes them); each must be on
  /// `device`, the device of what the watch already watches (checked with one `fstat` each
  /// unless `checkingDevices` is `false`: the caller checked it).
  ///
  /// - Returns: Whether every watch was added (when not, some may have been: they only report
  ///   more changes).
  func add(
    _ system: Syscalls, watching descriptors: [FileDescriptor], subdirectories: [String],
    in parent: FileDescriptor?, device: UInt64, checkingDevices: Bool = true
  ) -> Bool {
    #if os(Linux)
      if let faults = system.faults, !faults.allowsChangeWatch { return false }
      for fd in descriptors {
        guard !checkingDevices || (try? system.fstat(fd).device) == device,
          (try? system.inotifyAddWatch(self.fd, "/proc/self/fd/\(fd.rawValue)", mask: Self.events))
            != nil
        else { return false }
      }
      guard let parent else { return true }
      for name in subdirectories {
        if let status = try? system.fstatat(parent, name), status.kind == .directory,
          status.device != device
        {
          return false
        }
        do {
          _ = try system.inotifyAddWatch(
            self.fd, "/proc/self/fd/\(parent.rawValue)/\(name)",
            mask: Self.events | Self.subdirectoryOptions)
        } catch  where error == .noSuchFileOrDirectory {
          continue
        } catch {
          return false
        }
      }
      return true
    #else
      return false
    #endif
  }

  /// Adds a watch of the directory open as `directory` for what happens to the directory
  /// itself, not to its entries: moved or renamed (`IN_MOVE_SELF`), removed (`IN_DELETE_SELF`),
  /// or its mode, owner or link count changed (`IN_ATTRIB`; the kernel also reports this one
  /// for an entry's attributes). What watches a path's ancestors: a name on the path can only
  /// come to mean another directory by moving or removing the one it named (or by a mount,
  /// which inotify does not report).
  ///
  /// - Returns: Whether the watch was added (never on another platform).
  func addAncestor(_ system: Syscalls, _ directory: FileDescriptor) -> Bool {
    #if os(Linux)
      if let faults = system.faults, !faults.allowsChangeWatch { return false }
      let mask =
        UInt32(IN_ATTRIB) | UInt32(IN_MOVE_SELF) | UInt32(IN_DELETE_SELF) | UInt32(IN_ONLYDIR)
      return (try? system.inotifyAddWatch(fd, "/proc/self/fd/\(directory.rawValue)", mask: mask))
        != nil
    #else
      return false
    #endif
  }

  /// Whether the queue holds events (one `poll` with a zero timeout); when it does, reads it
  /// until it is empty (non-blocking `read`s up to `EAGAIN`). With a path watch (`path`), the
  /// events of the directories above the store are sorted out (``PathWatch/classify(_:ancestors:store:proving:)``):
  /// one that names an entry (a neighbour's) is no change, and, while the path watch proves the
  /// path (`proving`: then the same `poll` asks the mount table too), one about such a directory
  /// itself moved the path. Events that are all a neighbour's are drained and answered as
  /// `unchanged`: they say nothing about the store, and the next `poll` still sees any event
  /// queued after this one.
  ///
  /// System calls: one `poll` when nothing changed (and one `read` per 4 KiB of events plus the
  /// `read` that finds the queue empty when something did). (`poll` rather than a `read` that
  /// fails with `EAGAIN`: the same cost, and a call that nothing else in a store process makes,
  /// so a test can delay exactly this read of the watch with `strace`.) A `joined` watch (the
  /// sealing key file's, ``JoinedChangeWatch``) is polled in the same `poll` and told what it
  /// found, with `scope` and `user`.
  func poll(
    _ system: Syscalls, path: PathWatch? = nil, proving: Bool = false,
    joining joined: (any JoinedChangeWatch)? = nil, scope: UInt64 = 0, user: UInt32 = 0
  ) -> Poll {
    var mountsChanged = false
    do throws(Errno) {
      if let joined {
        // The joined watch's descriptors in the same `poll` (taken by it under its lock).
        let mounts = proving ? path?.mounts : nil
        let found = try joined.withJoinedPoll(scope: scope, user: user) { watch, itsMounts in
          system.hasInput(fd, orMountChange: mounts, joining: (watch, itsMounts))
        }.get()
        mountsChanged = found.mountsChanged
        if !found.input { return mountsChanged ? .changed(pathMoved: true) : .unchanged }
      } else if let path, proving {
        let found = try system.pollWatchAndMounts(fd, mountTable: path.mounts)
        mountsChanged = found.mountsChanged
        if !found.input { return mountsChanged ? .changed(pathMoved: true) : .unchanged }
      } else {
        guard try system.hasInput(fd) else { return .unchanged }
      }
    } catch {
      return .failed
    }
    return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
      var found = PathWatch.Events(storeChanged: mountsChanged, pathMoved: mountsChanged)
      while true {
        do throws(Errno) {
          let count = try system.read(fd, into: buffer)
          guard count > 0 else { return .failed }
          if let path {
            let events = PathWatch.classify(
              UnsafeRawBufferPointer(rebasing: buffer[..<count]), ancestors: path.ancestors,
              store: path.store, proving: proving)
            found.storeChanged = found.storeChanged || events.storeChanged
            found.pathMoved = found.pathMoved || events.pathMoved
          } else {
            found.storeChanged = true
          }
        } catch  where error == .wouldBlock {
          guard found.storeChanged || found.pathMoved else { return .unchanged }
          return .changed(pathMoved: found.pathMoved)
        } catch {
          return .failed
        }
      }
    }
  }

  /// Closes the inotify descriptor (its watches go with it).
  func close(_ system: Syscalls) {
    system.closeIgnoringErrors(fd)
  }
}
