#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Telling a writer's own write from every other change (``SharedStoreWatch/drainOwnWrite(_:since:of:)``).
extension StoreChangeWatch {
  /// The watch descriptors of a file and of the directory that holds it under `name`, in one
  /// watch: the events a `pwrite` of the file queues are an `IN_MODIFY` of the file's own watch
  /// and an `IN_MODIFY` naming `name` in the directory's watch, and nothing else.
  struct WrittenFile: Sendable {
    let file: Int32
    let directory: Int32
    /// The file's name in the directory, as the kernel reports it (without the terminating
    /// zero and padding).
    let name: [UInt8]
  }

  /// What one `read` of the watch after a write found (``drainOnce(_:ownWrite:path:proving:)``).
  enum Drain: Sendable, Equatable {
    /// Nothing was queued.
    case empty
    /// Events were read: `onlyOwnWrite` when they are exactly the two events of one write of
    /// ``WrittenFile`` (``isOneWrite(of:in:)``); `pathMoved` when one may have moved the store
    /// path (``PathWatch/classify(_:ancestors:store:proving:)``).
    case events(onlyOwnWrite: Bool, pathMoved: Bool)
    /// The descriptor failed.
    case failed
  }

  /// The watch descriptor this watch has for the file or directory open as `fd`, which must
  /// already be watched with ``events`` (`inotify_add_watch` with the same mask again returns
  /// the descriptor it has and changes nothing); `nil` when it cannot be had.
  func watchDescriptor(_ system: Syscalls, of fd: FileDescriptor) -> Int32? {
    #if os(Linux)
      if let faults = system.faults, !faults.allowsChangeWatch { return nil }
      return try? system.inotifyAddWatch(self.fd, "/proc/self/fd/\(fd.rawValue)", mask: Self.events)
    #else
      return nil
    #endif
  }

  /// One non-blocking `read` of the queue (up to 4 KiB of events), right after a `pwrite` of
  /// `ownWrite` made under the store's exclusive lock (before its `fdatasync`). Events that do
  /// not fit stay queued (the next `poll` finds them), so one `read` is enough to say whether
  /// what was queued *before* it is only that write; what is queued after it (during the
  /// `fdatasync`, say) is still queued at the next `poll`.
  ///
  /// What no `read` can tell: the kernel merges an event into an identical one queued just
  /// before it and not read yet. A write through a descriptor opened by a name outside the
  /// store directory (a hard link elsewhere, since removed: a record with a second name is
  /// refused) queues only the file's own event, so one made between the writer's `pwrite` and
  /// this `read` (adjacent system calls) merges into the writer's. Only a process of the same user that writes without the lock can make it,
  /// and such a process can write any record it likes into a store that is not sealed anyway.
  ///
  /// System calls: one `read`.
  func drainOnce(_ system: Syscalls, ownWrite: WrittenFile, path: PathWatch?, proving: Bool)
    -> Drain
  {
    withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
      do throws(Errno) {
        let count = try system.read(fd, into: buffer)
        guard count > 0 else { return .failed }
        let events = UnsafeRawBufferPointer(rebasing: buffer[..<count])
        return .events(
          onlyOwnWrite: Self.isOneWrite(of: ownWrite, in: events),
          pathMoved: path.map {
            PathWatch.classify(
              events, ancestors: $0.ancestors, store: $0.store, proving: proving
            ).pathMoved
          } ?? false)
      } catch  where error == .wouldBlock {
        return .empty
      } catch {
        return .failed
      }
    }
  }

  /// Whether `events` (as `read` returned them) are exactly what one `pwrite` of `written`
  /// queues: one `IN_MODIFY` of its own watch and one naming it in its directory's watch, and
  /// nothing else. A second write through any descriptor opened in the store directory queues
  /// two more (they alternate with the first two, so the kernel merges none of them); a
  /// truncation is an `IN_MODIFY` pair too; a new link or mode, a rename, a moved directory or a
  /// full queue (`IN_Q_OVERFLOW`) queue other events.
  static func isOneWrite(of written: WrittenFile, in events: UnsafeRawBufferPointer) -> Bool {
    #if os(Linux)
      let header = 16  // wd, mask, cookie, len
      var offset = 0
      var fileEvents = 0
      var directoryEvents = 0
      while offset < events.count {
        guard offset + header <= events.count, fileEvents + directoryEvents < 2 else {
          return false
        }
        let watched = events.loadUnaligned(fromByteOffset: offset, as: Int32.self)
        let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
        let length = Int(events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
        guard mask == UInt32(IN_MODIFY), offset + header + length <= events.count else {
          return false
        }
        if watched == written.file, length == 0 {
          fileEvents += 1
        } else if watched == written.directory {
          // The name, zero-terminated and padded with zeros.
          let name = events[(offset + header)..<(offset + header + length)]
          guard name.count > written.name.count, name.starts(with: written.name),
            name.dropFirst(written.name.count).allSatisfy({ $0 == 0 })
          else { return false }
          directoryEvents += 1
        } else {
          return false
        }
        offset += header + length
      }
      return fileEvents == 1 && directoryEvents == 1
    #else
      return false
    #endif
  }
}
