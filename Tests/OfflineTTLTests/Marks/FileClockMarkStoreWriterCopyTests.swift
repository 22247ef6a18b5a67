import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The writer's copy of a long-lived store with a change watch: a writing observation whose
/// `poll`, made under the exclusive lock, finds no event since this store's last write neither
/// checks the files by name nor reads the record; every change in between (another store's
/// write or sign-in, a file renamed over, an insecure mode, a moved directory) sends it to the
/// checks and the read, so it answers and writes exactly what the locked path would.
@Suite struct FileClockMarkStoreWriterCopyTests {
  static var watchAvailable: Bool { StoreChangeWatchTests.watchAvailable }

  static func at(_ milliseconds: Int64) -> ClockObservation {
    FileClockMarkStoreKeptOpenTests.at(milliseconds)
  }

  /// A store value with a change watch whose writer's copy is in place (its first operation
  /// marks it used, the second opens, checks, writes and keeps the copy).
  static func writing(_ path: String, _ plan: SyscallFaultPlan) throws -> FileClockMarkStore {
    let store = FileClockMarkStore(atPath: path, faults: plan)
    _ = try store.read()
    _ = try store.observe(readingClocks: { at(10) })
    return store
  }

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: [false, true])
  func aWritingObservationWithAQuietWatchNeitherChecksByNameNorReads(pathWatch: Bool) throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true, allowsPathWatch: pathWatch)
    let store = try Self.writing(path, plan)
    let handles = try #require(store.keptHandles())
    #expect(handles.writtenRecord != nil)
    #expect(
      pathWatch || handles.writerCopy.withLock { $0 } != nil, "the first write kept its copy")
    let pathWatched = handles.watch?.state.withLock { $0.pathProves } ?? false
    var quiet = 0
    for step in 1...5 {
      plan.resetCounts()
      let transition = try store.observe(readingClocks: { Self.at(10 + Int64(step)) })
      #expect(transition.wrote)
      #expect(transition.previous.mark == Self.at(10 + Int64(step - 1)).wall)
      #expect(try FileClockMarkStore(atPath: path).read() == transition.current)
      // Another process changing the attributes of an entry in a directory above the store
      // (such as `/tmp`), which the path watch's directory reports, adds reads to the `poll`,
      // or, found by the read after the write, sends the next write to its checks: only the
      // path watch sees such events.
      guard plan.count(of: .read) == 1, plan.count(of: .pread) == 0 else {
        #expect(pathWatch, "nothing above the store is watched: \(plan.trace)")
        continue
      }
      quiet += 1
      #expect(
        plan.count(of: .fstatat) == (pathWatched ? 0 : 1),
        "no check of the record or lock file by name; the store path's lstat only without a path watch"
      )
      #expect(plan.count(of: .poll) == 1, "one poll, one drain")
      #expect(plan.count(of: .flock) == 2)
      #expect(plan.count(of: .pwrite) == 1 && plan.count(of: .fdatasync) == 1)
      #expect(plan.count(of: .openat) == 0 && plan.count(of: .close) == 0)
    }
    #expect(quiet >= (pathWatch ? 1 : 5), "the record is not read again")
    #expect(!pathWatch || pathWatched, "the path watch was armed")
  }

  /// One change between two writing observations of the store under test, and what the next
  /// observation (at 6 s) must then find and leave.
  struct Change: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let make: @Sendable (_ parent: TemporaryStoreDirectory, _ path: String) throws -> Void
    /// The generation and mark (milliseconds after the base) the store holds afterwards.
    let generation: UInt64
    let mark: Int64
  }

  static let changes: [Change] = [
    Change(
      testDescription: "another store value's write of a higher mark",
      make: { _, path in
        _ = try FileClockMarkStore(atPath: path).observe(readingClocks: { at(9_000) })
      }, generation: 1, mark: 9_000),
    Change(
      testDescription: "another store value's sign-in",
      make: { _, path in
        _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: {
          at(1_000)
        })
      }, generation: 2, mark: 6_000),
    Change(
      testDescription: "an older record renamed over the record",
      make: { parent, path in
        let record = path + "/" + FileClockMarkStore.recordFileName
        #expect(rename(parent.appending("older"), record) == 0)
      }, generation: 1, mark: 6_000),
    Change(
      testDescription: "the store directory replaced by a copy",
      make: { parent, path in
        #expect(rename(path, parent.appending("moved")) == 0)
        #expect(rename(parent.appending("copy"), path) == 0)
      }, generation: 1, mark: 6_000),
    Change(
      testDescription: "an older record written through another open file description",
      make: { parent, path in
        let older = try Data(contentsOf: URL(fileURLWithPath: parent.appending("older")))
        let fd = open(path + "/" + FileClockMarkStore.recordFileName, O_WRONLY | O_CLOEXEC)
        #expect(fd >= 0)
        #expect(older.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == older.count)
        close(fd)
      }, generation: 1, mark: 6_000),
    Change(
      testDescription: "the lock file replaced",
      make: { _, path in
        let lock = path + "/" + FileClockMarkStore.lockFileName
        #expect(unlink(lock) == 0)
        let fd = open(lock, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        close(fd)
      }, generation: 1, mark: 6_000),
  ]

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: changes, [false, true])
  func everyChangeBetweenTwoWritesIsNoticed(_ change: Change, pathWatch: Bool) throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let record = path + "/" + FileClockMarkStore.recordFileName
    // An older record (mark at the base, generation 1) and a copy of the directory, for the
    // changes that put them in place.
    try FileManager.default.copyItem(atPath: record, toPath: parent.appending("older"))
    try FileManager.default.copyItem(atPath: path, toPath: parent.appending("copy"))
    let plan = SyscallFaultPlan(allowsChangeWatch: true, allowsPathWatch: pathWatch)
    let store = try Self.writing(path, plan)
    _ = try store.observe(readingClocks: { Self.at(5_000) })
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(5_000).wall)
    try change.make(parent, path)
    let expectedPrevious = try FileClockMarkStore(atPath: path).read()
    let transition = try store.observe(readingClocks: { Self.at(6_000) })
    #expect(transition.previous == expectedPrevious, "judged on the record now in place")
    let stored = try FileClockMarkStore(atPath: path).read()
    #expect(stored.generation == change.generation)
    #expect(stored.mark == Self.at(change.mark).wall)
    // And the observation after it, through whatever the store keeps now.
    _ = try store.observe(readingClocks: { Self.at(12_000) })
    let after = try FileClockMarkStore(atPath: path).read()
    #expect(after.generation == change.generation)
    #expect(after.mark == Self.at(12_000).wall)
  }

  /// A change between two writes that the locked path refuses, and how to undo it.
  struct Refused: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let make: @Sendable (_ parent: TemporaryStoreDirectory, _ record: String) -> Void
    let undo: @Sendable (_ parent: TemporaryStoreDirectory, _ record: String) -> Void
  }

  static let refused: [Refused] = [
    Refused(
      testDescription: "the record made readable by others",
      make: { _, record in #expect(chmod(record, 0o644) == 0) },
      undo: { _, record in _ = chmod(record, 0o600) }),
    Refused(
      testDescription: "a hard link to the record made in another directory",
      make: { parent, record in #expect(link(record, parent.appending("link")) == 0) },
      undo: { parent, _ in _ = unlink(parent.appending("link")) }),
    Refused(
      testDescription: "the record truncated to zero bytes",
      make: { _, record in #expect(truncate(record, 0) == 0) },
      undo: { _, _ in }),
  ]

  /// A record that the locked path refuses, made so between two writes, is refused as the
  /// locked path refuses it (nothing is written through the copy).
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: refused)
  func aRefusedRecordBetweenTwoWritesIsRefused(_ change: Refused) throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let record = path + "/" + FileClockMarkStore.recordFileName
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.writing(path, plan)
    change.make(parent, record)
    defer { change.undo(parent, record) }
    let bytes = try Data(contentsOf: URL(fileURLWithPath: record))
    let expected: StoreError
    do {
      _ = try FileClockMarkStore(atPath: path).observe(readingClocks: { Self.at(7_000) })
      Issue.record("the locked path wrote through a refused record")
      return
    } catch {
      expected = error
    }
    plan.resetCounts()
    #expect {
      _ = try store.observe(readingClocks: { Self.at(7_000) })
    } throws: { ($0 as? StoreError)?.code == expected.code }
    #expect(plan.count(of: .pwrite) == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: record)) == bytes, "left as it was")
  }

  /// The item store's reads drain the same watch: a read between two writes that drains the
  /// writer's events (or none) never leaves a stale copy in use, and the next write after a
  /// drain by another store checks and reads again.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aDrainByAnotherReadBetweenTwoWritesSendsTheWriterToItsRead() throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.writing(path, plan)
    // Another process's write queues an event; the store's own lock-free read drains it.
    _ = try FileClockMarkStore(atPath: path).observe(readingClocks: { Self.at(8_000) })
    #expect(try store.read().mark == Self.at(8_000).wall)
    plan.resetCounts()
    let transition = try store.observe(readingClocks: { Self.at(9_000) })
    #expect(transition.previous.mark == Self.at(8_000).wall)
    #expect(plan.count(of: .pread) == 1, "the copy was dropped: the record is read again")
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(9_000).wall)
  }

  /// A full queue between two writes: events of neighbours in the directory above the store
  /// (which the path watch otherwise ignores) fill the watch's queue, the kernel queues
  /// `IN_Q_OVERFLOW` and drops what follows, here another store's write. The overflow itself
  /// sends the writer to its checks and its read.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aFullQueueBetweenTwoWritesSendsTheWriterToItsRead() throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true, allowsPathWatch: true)
    let store = try Self.writing(path, plan)
    _ = try store.observe(readingClocks: { Self.at(5_000) })
    let handles = try #require(store.keptHandles())
    try #require(
      handles.watch?.state.withLock { $0.pathProves } == true, "the path watch was armed")
    let limit =
      (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
      .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
    let neighbours = [parent.appending("a"), parent.appending("b")]
    for name in neighbours {
      let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      #expect(fd >= 0)
      close(fd)
    }
    // Alternating, so that the kernel merges none of the events.
    let failed = (0...min(limit, 1 << 20)).filter {
      chmod(neighbours[$0 % 2], $0 % 4 < 2 ? 0o600 : 0o640) != 0
    }
    #expect(failed.isEmpty)
    _ = try FileClockMarkStore(atPath: path).observe(readingClocks: { Self.at(9_000) })
    plan.resetCounts()
    let transition = try store.observe(readingClocks: { Self.at(10_000) })
    #expect(transition.previous.mark == Self.at(9_000).wall, "judged on the other store's write")
    #expect(plan.count(of: .pread) == 1, "the copy was dropped: the record is read again")
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(10_000).wall)
  }

  /// The watch failing (its `poll`, or the `read` after the writer's own write): the writer
  /// keeps no copy from then on and checks and reads on every write.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: [SyscallKind.poll, .read])
  func aFailingWatchSendsEveryLaterWriteToItsRead(_ failing: SyscallKind) throws {
    let (parent, path) = try FileClockMarkStoreKeptOpenTests.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.writing(path, plan)
    let handles = try #require(store.keptHandles())
    #expect(handles.writerCopy.withLock { $0 } != nil)
    plan.resetCounts()
    plan.fail(failing, occurrence: 1, with: .ioError)
    let first = try store.observe(readingClocks: { Self.at(20) })
    #expect(first.wrote && first.previous.mark == Self.at(10).wall)
    #expect(plan.injected.count == 1)
    #expect(
      plan.count(of: .pread) == (failing == .poll ? 1 : 0),
      "a failed poll sends this write to its read; a failed drain the next")
    #expect(handles.writerCopy.withLock { $0 } == nil, "no copy kept")
    for step in 1...3 {
      plan.resetCounts()
      let transition = try store.observe(readingClocks: { Self.at(20 + Int64(step)) })
      #expect(transition.previous.mark == Self.at(20 + Int64(step - 1)).wall)
      #expect(plan.count(of: .pread) == 1 && plan.count(of: .poll) == 0)
      #expect(handles.writerCopy.withLock { $0 } == nil)
    }
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(23).wall)
  }
}
