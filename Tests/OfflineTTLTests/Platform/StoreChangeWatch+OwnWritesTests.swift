import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Telling a writer's own write from every other change (``StoreChangeWatch/drainOnce(_:ownWrite:path:proving:)``),
/// on the kernel's real events: one `pwrite` of the record is exactly two `IN_MODIFY` events,
/// and anything else queued before the read (another write through any descriptor, before or
/// after the writer's own, a truncation, a new link, a mode, a rename, a moved directory, a full
/// queue) makes the read answer "not only the own write".
@Suite struct StoreChangeWatchOwnWritesTests {
  static var watchAvailable: Bool { StoreChangeWatchTests.watchAvailable }

  static let name = "clock-mark"

  /// A directory holding a 4 KiB record, both open (the record read-write) and watched in one
  /// watch, as a kept mark store has them.
  struct Watched {
    let parent: TemporaryStoreDirectory
    let directory: String
    let record: String
    let system = Syscalls()
    let directoryFD: FileDescriptor
    let recordFD: FileDescriptor
    let watch: StoreChangeWatch
    let written: StoreChangeWatch.WrittenFile

    init() throws {
      parent = try TemporaryStoreDirectory(prefix: "own-writes")
      directory = parent.appending("store")
      record = directory + "/" + StoreChangeWatchOwnWritesTests.name
      #expect(mkdir(directory, 0o700) == 0)
      let created = open(record, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      #expect(created >= 0)
      #expect(ftruncate(created, 4096) == 0)
      close(created)
      directoryFD = try system.open(directory, .readOnly)
      recordFD = try system.open(record, .readWrite)
      watch = try #require(StoreChangeWatch.open(system, watching: [directoryFD, recordFD]))
      let file = try #require(watch.watchDescriptor(system, of: recordFD))
      let directoryWatch = try #require(watch.watchDescriptor(system, of: directoryFD))
      written = StoreChangeWatch.WrittenFile(
        file: file, directory: directoryWatch, name: Array(StoreChangeWatchOwnWritesTests.name.utf8)
      )
    }

    func remove() {
      watch.close(system)
      system.closeIgnoringErrors(recordFD)
      system.closeIgnoringErrors(directoryFD)
      parent.remove()
    }

    /// The writer's own write: one `pwrite` of one 4 KiB block through its descriptor.
    func ownWrite() throws {
      try system.pwriteAll(recordFD, bytes: [UInt8](repeating: 7, count: 4096)[...], at: 0)
    }

    func drain() -> StoreChangeWatch.Drain {
      watch.drainOnce(system, ownWrite: written, path: nil, proving: false)
    }
  }

  /// A `pwrite` of 4 KiB through a descriptor opened by `path`.
  static func writeThrough(_ path: String) {
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    #expect(fd >= 0)
    let bytes = [UInt8](repeating: 9, count: 4096)
    #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4096, 0) } == 4096)
    close(fd)
  }

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func theOwnWriteAloneIsTheOwnWrite() throws {
    let watched = try Watched()
    defer { watched.remove() }
    for _ in 0..<3 {
      #expect(watched.drain() == .empty)
      try watched.ownWrite()
      #expect(watched.drain() == .events(onlyOwnWrite: true, pathMoved: false))
    }
    #expect(watched.drain() == .empty, "one read took every event of the write")
  }

  /// One change made before or after the writer's own write, before its read of the watch.
  struct Change: Sendable, CustomTestStringConvertible {
    let testDescription: String
    /// Whether the change is made before the own write (between the writer's `poll` and its
    /// `pwrite`) rather than after it.
    let before: Bool
    /// Made before the first read of the watch (its events are drained with it).
    var prepare: @Sendable (_ watched: Watched) throws -> Void = { _ in }
    let make: @Sendable (_ watched: Watched) throws -> Void
  }

  /// The name of a hard link to the record outside the store directory.
  static func outsideLink(_ watched: Watched) -> String { watched.parent.appending("link") }

  static let changes: [Change] =
    [true, false].flatMap { before -> [Change] in
      let when = before ? "before" : "after"
      return [
        Change(
          testDescription: "a write through another open file description, \(when) the own write",
          before: before, make: { writeThrough($0.record) }),
        Change(
          testDescription:
            "a second write through the writer's own descriptor, \(when) the own write",
          before: before, make: { try $0.ownWrite() }),
        Change(
          testDescription: "a hard link to the record made \(when) the own write",
          before: before, make: { #expect(link($0.record, outsideLink($0)) == 0) }),
        Change(
          testDescription: "the record truncated to its own size, \(when) the own write",
          before: before, make: { #expect(truncate($0.record, 4096) == 0) }),
        Change(
          testDescription: "the record truncated to zero, \(when) the own write",
          before: before, make: { #expect(truncate($0.record, 0) == 0) }),
        Change(
          testDescription: "the record's mode changed, \(when) the own write",
          before: before, make: { #expect(chmod($0.record, 0o600) == 0) }),
        Change(
          testDescription: "another file renamed over the record, \(when) the own write",
          before: before,
          make: {
            let other = $0.directory + "/other"
            let fd = open(other, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            close(fd)
            #expect(rename(other, $0.record) == 0)
          }),
        Change(
          testDescription: "the store directory moved, \(when) the own write",
          before: before,
          make: { #expect(rename($0.directory, $0.parent.appending("moved")) == 0) }),
        Change(
          testDescription: "a neighbour in the store directory written, \(when) the own write",
          before: before,
          make: {
            let fd = open($0.directory + "/clock-mark.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            #expect(write(fd, "x", 1) == 1)
            close(fd)
          }),
      ]
    } + [
      // Made before the own write only: the write through a name outside the store directory
      // queues only the file's own event, which the kernel merges into the writer's identical
      // one when it comes right after it (`StoreChangeWatch.drainOnce` names this limit).
      Change(
        testDescription:
          "a write through a hard link made earlier in another directory, before the own write",
        before: true, prepare: { #expect(link($0.record, outsideLink($0)) == 0) },
        make: { writeThrough(outsideLink($0)) })
    ]

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: changes)
  func anyOtherChangeIsNotTheOwnWrite(_ change: Change) throws {
    let watched = try Watched()
    defer { watched.remove() }
    try change.prepare(watched)
    _ = watched.drain()
    #expect(watched.drain() == .empty)
    if change.before { try change.make(watched) }
    try watched.ownWrite()
    if !change.before { try change.make(watched) }
    #expect(watched.drain() == .events(onlyOwnWrite: false, pathMoved: false))
  }

  /// A full queue: the kernel queues `IN_Q_OVERFLOW` and drops what follows. The events read
  /// are then more than one write's, and an overflow event among a write's own is refused too.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aFullQueueIsNotTheOwnWrite() throws {
    let watched = try Watched()
    defer { watched.remove() }
    let limit =
      (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
      .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
    try watched.ownWrite()
    // Each write through another descriptor queues two events that alternate, so none merge.
    let fd = open(watched.record, O_WRONLY | O_CLOEXEC)
    #expect(fd >= 0)
    defer { close(fd) }
    let bytes = [UInt8](repeating: 9, count: 4096)
    let written = bytes.withUnsafeBytes { buffer in
      (0...(min(limit, 1 << 20) / 2)).reduce(0) { sum, _ in
        sum + pwrite(fd, buffer.baseAddress, 4096, 0)
      }
    }
    #expect(written == 4096 * (min(limit, 1 << 20) / 2 + 1))
    #expect(watched.drain() == .events(onlyOwnWrite: false, pathMoved: false))

    // The own write's two events followed by an overflow event, as `read` returns them.
    var events: [UInt8] = []
    func append(_ wd: Int32, _ mask: UInt32, _ name: String?) {
      let padded =
        name.map { Array($0.utf8) + [UInt8](repeating: 0, count: 16 - $0.utf8.count) } ?? []
      withUnsafeBytes(of: wd) { events += $0 }
      withUnsafeBytes(of: mask) { events += $0 }
      withUnsafeBytes(of: UInt32(0)) { events += $0 }
      withUnsafeBytes(of: UInt32(padded.count)) { events += $0 }
      events += padded
    }
    append(watched.written.directory, UInt32(IN_MODIFY), Self.name)
    append(watched.written.file, UInt32(IN_MODIFY), nil)
    #expect(events.withUnsafeBytes { StoreChangeWatch.isOneWrite(of: watched.written, in: $0) })
    append(-1, UInt32(IN_Q_OVERFLOW), nil)
    #expect(!events.withUnsafeBytes { StoreChangeWatch.isOneWrite(of: watched.written, in: $0) })
  }
}
