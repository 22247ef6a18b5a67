import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The change watch of a long-lived store (``StoreChangeWatch``): a repeated read that finds no
/// event reuses the last fully checked read with one `read` of the watch and one `lstat`, and
/// every kind of change between two repeated reads sends the next one to the full check, which
/// answers exactly as a store value opened afresh.
@Suite struct StoreChangeWatchTests {
  /// Whether this machine's temporary directory can hold a watched store (Linux, a local file
  /// system, inotify instances left).
  static let watchAvailable: Bool = {
    guard let parent = try? TemporaryStoreDirectory(prefix: "watch-probe") else { return false }
    defer { parent.remove() }
    let system = Syscalls()
    guard let fd = try? system.open(parent.path, .readOnly) else { return false }
    defer { system.closeIgnoringErrors(fd) }
    guard let watch = StoreChangeWatch.open(system, watching: [fd]) else { return false }
    watch.close(system)
    return true
  }()

  static func t(_ nanoseconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
  }

  /// A store with `count` items and a mark, and its path.
  static func makeStore(count: Int = 3) throws -> (TemporaryStoreDirectory, String) {
    let parent = try TemporaryStoreDirectory(prefix: "watch")
    let path = parent.appending("store")
    try FileManager.default.createDirectory(
      atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    try DirectoryCacheStoreKeptOpenTests.commit(path, count: count)
    _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: {
      FileClockMarkStoreKeptOpenTests.at(0)
    })
    return (parent, path)
  }

  /// A cache store whose third summary was served from the watch (the first notes a consistent
  /// index, the second opens, arms the watch and checks everything).
  static func watchedCache(_ path: String, _ plan: SyscallFaultPlan) throws -> DirectoryCacheStore {
    let store = DirectoryCacheStore(atPath: path, faults: plan)
    for _ in 0..<3 { _ = try store.summary() }
    return store
  }

  static func fresh(_ path: String) -> Result<ItemTimeSummary, StoreError> {
    DirectoryCacheStoreKeptOpenTests.fresh(path)
  }

  static func answer(_ store: DirectoryCacheStore) -> Result<ItemTimeSummary, StoreError> {
    DirectoryCacheStoreKeptOpenTests.answer(store)
  }

  /// Whether the next summary of `store` was served from the watch (no `pread`), and its answer.
  static func summaryFromWatch(_ store: DirectoryCacheStore, _ plan: SyscallFaultPlan) -> (
    Bool, Result<ItemTimeSummary, StoreError>
  ) {
    plan.resetCounts()
    let answer = Self.answer(store)
    return (plan.count(of: .pread) == 0 && plan.count(of: .openat) == 0, answer)
  }

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aWatchedRepeatedSummaryReadsTheWatchAndOneLstatOnly() throws {
    let (parent, path) = try Self.makeStore(count: 7)
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    plan.resetCounts()
    for _ in 1...5 {
      let summary = try store.summary()
      #expect(summary == (try Self.fresh(path).get()))
      #expect(summary.count == 7)
      #expect(try store.summaryIfSettled() == summary)
      #expect(try store.summary(forGeneration: 1) == summary)
    }
    #expect(plan.count(of: .poll) == 15, "one poll of the watch per summary")
    #expect(plan.count(of: .read) == 0, "nothing to drain")
    #expect(plan.count(of: .fstatat) == 15, "one lstat of the store path per summary")
    #expect(plan.count(of: .pread) == 0)
    #expect(plan.count(of: .openat) == 0 && plan.count(of: .open) == 0)
    #expect(plan.count(of: .close) == 0 && plan.count(of: .flock) == 0)
    #expect(plan.count(of: .write) == 0 && plan.count(of: .pwrite) == 0)
    #expect(plan.count(of: .fsync) == 0 && plan.count(of: .fdatasync) == 0)
  }

  /// One change to the store between two repeated summaries.
  struct Change: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let make: @Sendable (_ parent: TemporaryStoreDirectory, _ path: String) throws -> Void
  }

  static func chmodChange(_ name: String, _ mode: mode_t) -> Change {
    Change(testDescription: "chmod \(name.isEmpty ? "store" : name) \(String(mode, radix: 8))") {
      _, path in
      #expect(chmod(name.isEmpty ? path : path + "/" + name, mode) == 0)
    }
  }

  static let changes: [Change] = [
    Change(testDescription: "a commit by another store value") { _, path in
      try DirectoryCacheStoreKeptOpenTests.commit(path, count: 4, prefix: "new", offset: 500)
    },
    Change(testDescription: "an item renamed in") { parent, path in
      let other = parent.appending("other")
      try FileManager.default.createDirectory(
        atPath: other, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      try DirectoryCacheStoreKeptOpenTests.commit(other, count: 1, prefix: "late", offset: 9_000)
      #expect(rename(other + "/cache/items/late-0", path + "/cache/items/late-0") == 0)
    },
    Change(testDescription: "an item unlinked") { _, path in
      #expect(unlink(path + "/cache/items/item-0") == 0)
    },
    Change(testDescription: "the index written in place") { _, path in
      let handle = try #require(FileHandle(forWritingAtPath: path + "/cache/index"))
      try handle.write(contentsOf: Data(repeating: 0, count: 16))
      try handle.close()
    },
    Change(testDescription: "a pending marker") { _, path in
      let pending = path + "/cache/pending"
      #expect(FileManager.default.createFile(atPath: pending, contents: Data()))
      #expect(chmod(pending, 0o600) == 0)
    },
    Change(testDescription: "the store directory replaced by rename") { parent, path in
      let copy = parent.appending("copy")
      try FileManager.default.createDirectory(
        atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      try DirectoryCacheStoreKeptOpenTests.commit(copy, count: 6, prefix: "copy")
      #expect(rename(path, parent.appending("moved")) == 0)
      #expect(rename(copy, path) == 0)
    },
    Change(testDescription: "cache/ replaced by rename") { parent, path in
      let copy = parent.appending("copy")
      try FileManager.default.createDirectory(
        atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      try DirectoryCacheStoreKeptOpenTests.commit(copy, count: 5, prefix: "copy")
      #expect(rename(path + "/cache", parent.appending("old-cache")) == 0)
      #expect(rename(copy + "/cache", path + "/cache") == 0)
    },
    Change(testDescription: "items/ replaced by rename") { parent, path in
      let copy = parent.appending("copy")
      try FileManager.default.createDirectory(
        atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      try DirectoryCacheStoreKeptOpenTests.commit(copy, count: 5, prefix: "copy")
      #expect(rename(path + "/cache/items", parent.appending("old-items")) == 0)
      #expect(rename(copy + "/cache/items", path + "/cache/items") == 0)
    },
    chmodChange("", 0o777),
    chmodChange("cache", 0o770),
    chmodChange("cache/index", 0o666),
    chmodChange("cache/items", 0o777),
    chmodChange("cache/items/item-1", 0o644),
  ]

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: changes)
  func everyChangeBetweenTwoRepeatedSummariesIsNoticed(_ change: Change) throws {
    let (parent, path) = try Self.makeStore()
    defer {
      for name in ["", "cache", "cache/items"] { _ = chmod(path + "/" + name, 0o700) }
      parent.remove()
    }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    let (watched, before) = Self.summaryFromWatch(store, plan)
    #expect(watched, "served from the watch before the change")
    #expect(before == Self.fresh(path))
    try change.make(parent, path)
    let (stillWatched, after) = Self.summaryFromWatch(store, plan)
    #expect(!stillWatched, "the change sent the summary to the full check")
    #expect(after == Self.fresh(path))
    #expect(Self.answer(store) == Self.fresh(path), "and the next one agrees too")
  }

  /// A directory above the store replaced by rename (no watched inode changes): the `lstat` of
  /// the store path that every watched summary makes sees another directory.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aDirectoryAboveTheStoreReplacedByRenameIsNoticed() throws {
    let parent = try TemporaryStoreDirectory(prefix: "watch-above")
    defer { parent.remove() }
    for name in ["a", "b"] {
      try FileManager.default.createDirectory(
        atPath: parent.appending(name), withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
      try FileManager.default.createDirectory(
        atPath: parent.appending(name + "/store"), withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    try DirectoryCacheStoreKeptOpenTests.commit(parent.appending("a/store"), count: 2)
    try DirectoryCacheStoreKeptOpenTests.commit(parent.appending("b/store"), count: 5)
    let path = parent.appending("a/store")
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    #expect(Self.summaryFromWatch(store, plan).0)
    #expect(rename(parent.appending("a"), parent.appending("old-a")) == 0)
    #expect(rename(parent.appending("b"), parent.appending("a")) == 0)
    let (watched, after) = Self.summaryFromWatch(store, plan)
    #expect(!watched)
    #expect(try after.get().count == 5)
    #expect(after == Self.fresh(path))
  }

  /// Another user's ownership (root only: `chown` to another user needs it).
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    .enabled(if: geteuid() == 0, "chown to another user needs root"),
    arguments: ["", "cache", "cache/index", "cache/items"])
  func aChownIsNoticed(_ name: String) throws {
    let (parent, path) = try Self.makeStore()
    let target = name.isEmpty ? path : path + "/" + name
    defer {
      _ = chown(target, 0, 0)
      parent.remove()
    }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    #expect(Self.summaryFromWatch(store, plan).0)
    #expect(chown(target, 4_242, 4_242) == 0)
    let (watched, after) = Self.summaryFromWatch(store, plan)
    #expect(!watched)
    guard case .failure(let error) = after else {
      Issue.record("another user's \(name) was read")
      return
    }
    #expect(error.code == .insecureStore)
    #expect(after == Self.fresh(path))
  }

  /// More events than the kernel queues (`max_queued_events`): the queue overflows, and the
  /// overflow is an event like any other. Nothing that changes an answer happens here
  /// (permissions set to what they were), so only the path taken shows it.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aQueueOverflowSendsTheSummaryToTheFullCheck() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let limit =
      (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
      .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    #expect(Self.summaryFromWatch(store, plan).0)
    // Alternating targets: consecutive identical events would be merged into one. (Not
    // `items/`: a change of its status makes the index stale, a full check every time.)
    var failures = 0
    for _ in 0...(limit / 2 + 1) {
      if chmod(path, 0o700) != 0 { failures += 1 }
      if chmod(path + "/cache", 0o700) != 0 { failures += 1 }
    }
    #expect(failures == 0)
    let (watched, after) = Self.summaryFromWatch(store, plan)
    #expect(!watched)
    #expect(after == Self.fresh(path))
    #expect(Self.summaryFromWatch(store, plan).0, "watched again after the full check")
  }

  /// A watch that fails to read is closed: every later summary takes the full check.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aFailingWatchIsDroppedForTheFullCheck() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedCache(path, plan)
    plan.resetCounts()
    plan.fail(.poll, occurrence: 1, with: .ioError)
    #expect(Self.answer(store) == Self.fresh(path))
    #expect(plan.count(of: .pread) == 1, "the full check")
    plan.resetCounts()
    #expect(Self.answer(store) == Self.fresh(path))
    #expect(plan.count(of: .poll) == 0 && plan.count(of: .pread) == 1, "no watch any more")
  }

  // MARK: The mark store

  static func watchedMarks(_ path: String, _ plan: SyscallFaultPlan) throws -> FileClockMarkStore {
    let store = FileClockMarkStore(atPath: path, faults: plan)
    _ = try store.read()
    _ = try store.read()
    return store
  }

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aWatchedRepeatedObservationReadsTheWatchAndOneLstatOnly() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedMarks(path, plan)
    plan.resetCounts()
    for step in 1...5 {
      let clocks = FileClockMarkStoreKeptOpenTests.at(10 + Int64(step))
      let kept = try store.observe(resolution: .seconds(1), readingClocks: { clocks })
      let locked = try FileClockMarkStore(atPath: path).observe(
        resolution: .seconds(1), readingClocks: { clocks })
      #expect(kept == locked)
      #expect(!kept.wrote)
    }
    #expect(plan.count(of: .poll) == 5, "one poll of the watch per observation")
    #expect(plan.count(of: .read) == 0)
    #expect(plan.count(of: .fstatat) == 5, "one lstat of the directory per observation")
    #expect(plan.count(of: .pread) == 0)
    #expect(plan.count(of: .flock) == 0, "no lock: the record reused was read under it")
    #expect(plan.count(of: .openat) == 0 && plan.count(of: .close) == 0)
    #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .fdatasync) == 0)
    #expect(plan.count(of: .write) == 0 && plan.count(of: .fsync) == 0)
  }

  /// The changes to the mark record itself between two repeated observations or checks.
  static let markRecordChanges: [Change] = [
    Change(testDescription: "a mark write by another store value") { _, path in
      _ = try FileClockMarkStore(atPath: path).observe(
        resolution: .zero, readingClocks: { FileClockMarkStoreKeptOpenTests.at(60_000) })
    },
    Change(testDescription: "a sign-in by another store value") { _, path in
      _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: {
        FileClockMarkStoreKeptOpenTests.at(30_000)
      })
    },
    Change(testDescription: "an older mark record renamed in") { parent, path in
      #expect(rename(parent.appending("older"), path + "/clock-mark") == 0)
    },
    Change(testDescription: "the mark record's bytes damaged in place") { _, path in
      let handle = try #require(FileHandle(forWritingAtPath: path + "/clock-mark"))
      try handle.write(contentsOf: Data(repeating: 0, count: 8192))
      try handle.close()
    },
    Change(testDescription: "the mark record unlinked") { _, path in
      #expect(unlink(path + "/clock-mark") == 0)
    },
    chmodChange("clock-mark", 0o644),
    chmodChange("clock-mark.lock", 0o666),
  ]

  /// Every change to the mark store between two repeated observations.
  static let markChanges: [Change] =
    markRecordChanges + [
      chmodChange("", 0o777),
      Change(testDescription: "the store directory replaced by rename") { parent, path in
        #expect(rename(path, parent.appending("moved")) == 0)
        #expect(rename(parent.appending("copy"), path) == 0)
      },
    ]

  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: markChanges)
  func everyChangeBetweenTwoRepeatedObservationsIsNoticed(_ change: Change) throws {
    let (parent, path) = try Self.makeStore()
    defer {
      _ = chmod(path, 0o700)
      parent.remove()
    }
    try FileManager.default.copyItem(
      atPath: path + "/clock-mark", toPath: parent.appending("older"))
    _ = try FileClockMarkStore(atPath: path).observe(
      resolution: .zero, readingClocks: { FileClockMarkStoreKeptOpenTests.at(5_000) })
    try FileManager.default.copyItem(atPath: path, toPath: parent.appending("copy"))
    _ = try FileClockMarkStore(atPath: path).observe(
      resolution: .zero, readingClocks: { FileClockMarkStoreKeptOpenTests.at(10_000) })
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedMarks(path, plan)
    plan.resetCounts()
    #expect(try store.read().mark == FileClockMarkStoreKeptOpenTests.at(10_000).wall)
    #expect(plan.count(of: .pread) == 0, "served from the watch before the change")
    try change.make(parent, path)
    plan.resetCounts()
    let kept = Result { () throws(StoreError) in try store.read() }
    #expect(plan.count(of: .pread) + plan.count(of: .openat) > 0, "the full check")
    let locked = Result { () throws(StoreError) in try FileClockMarkStore(atPath: path).read() }
    switch (kept, locked) {
    case (.success(let a), .success(let b)): #expect(a == b)
    case (.failure(let a), .failure(let b)):
      #expect(a.code == b.code && a.unreadableReason == b.unreadableReason)
    default: Issue.record("kept \(kept), locked \(locked)")
    }
  }

  /// A writer holding the lock, once it has written, is noticed at its write (before its
  /// `fdatasync`): the next observation reads under the lock as before, never the watch.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aWriteInFlightIsNoticedBeforeItIsDurable() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedMarks(path, plan)
    #expect(store.keptOpenRecord() != nil)
    let lock = open(path + "/clock-mark.lock", O_RDONLY | O_CLOEXEC)
    try #require(lock >= 0)
    defer { close(lock) }
    #expect(flock(lock, LOCK_EX) == 0)
    // The write of a writer that holds the lock, before its sync: one byte of the second slot.
    let record = open(path + "/clock-mark", O_WRONLY | O_CLOEXEC)
    try #require(record >= 0)
    var byte: UInt8 = 0
    #expect(pwrite(record, &byte, 1, 4_096) == 1)
    close(record)
    #expect(store.keptOpenRecord() == nil, "never the watch while a write may be in flight")
    #expect(flock(lock, LOCK_UN) == 0)
  }

  /// A writer that holds the lock but has written nothing yet changes nothing a reader relies
  /// on: the watched read reuses the durable record without waiting and without the lock, and
  /// it is the record a locked read finds once the writer lets go.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aWriterThatHasNotWrittenYetDoesNotHoldUpTheWatchedRead() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    let store = try Self.watchedMarks(path, plan)
    let before = try #require(store.keptOpenRecord())
    let lock = open(path + "/clock-mark.lock", O_RDONLY | O_CLOEXEC)
    try #require(lock >= 0)
    defer { close(lock) }
    #expect(flock(lock, LOCK_EX) == 0)
    plan.resetCounts()
    #expect(store.keptOpenRecord() == before)
    #expect(plan.count(of: .flock) == 0 && plan.count(of: .pread) == 0)
    #expect(flock(lock, LOCK_UN) == 0)
    #expect(try FileClockMarkStore(atPath: path).read() == before)
  }

  // MARK: Both stores of one gate

  /// A gate over `path` whose item store and mark store keep one plan each.
  static func gate(
    _ path: String, cacheFaults: SyscallFaultPlan? = nil, markFaults: SyscallFaultPlan? = nil
  ) throws -> OfflineAccessGate {
    let cache =
      cacheFaults.map { DirectoryCacheStore(atPath: path, faults: $0) }
      ?? DirectoryCacheStore(atPath: path)
    let marks =
      markFaults.map { FileClockMarkStore(atPath: path, faults: $0) }
      ?? FileClockMarkStore(atPath: path)
    return OfflineAccessGate(
      cache: cache, marks: marks,
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: ManualWallClock(FileClockMarkStoreKeptOpenTests.at(10).wall), bootClock: nil)
  }

  /// What a decision says, for comparing two gates' decisions made at the same clock.
  static func outcome(_ decision: OfflineAccessDecision) -> String {
    let errors = [decision.markError, decision.cacheError].map {
      $0.map { "\($0.code) \(String(describing: $0.unreadableReason))" } ?? "-"
    }
    return
      "\(decision.status) \(decision.reasons) \(String(describing: decision.previousMark)) "
      + "\(String(describing: decision.generation)) \(String(describing: decision.items)) "
      + errors.joined(separator: " ")
  }

  /// From the third check of one gate on, a repeated check polls the one change watch both
  /// stores share once, and `lstat`s the store path once, for both stores (the item store reads
  /// first; the mark store is given the same check).
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"))
  func aRepeatedGateCheckPollsTheSharedWatchOnceForBothStores() throws {
    let (parent, path) = try Self.makeStore(count: 4)
    defer { parent.remove() }
    let cacheFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let markFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let gate = try Self.gate(path, cacheFaults: cacheFaults, markFaults: markFaults)
    for _ in 0..<3 { _ = gate.checkEligibility() }
    for _ in 0..<3 {
      cacheFaults.resetCounts()
      markFaults.resetCounts()
      let decision = gate.checkEligibility()
      #expect(Self.outcome(decision) == Self.outcome(try Self.gate(path).checkEligibility()))
      #expect(cacheFaults.count(of: .poll) == 1, "one poll: \(cacheFaults.trace)")
      #expect(cacheFaults.count(of: .fstatat) == 1, "one lstat: \(cacheFaults.trace)")
      #expect(markFaults.count(of: .poll) == 0, "the same poll: \(markFaults.trace)")
      #expect(markFaults.count(of: .fstatat) == 0, "the same lstat: \(markFaults.trace)")
      for plan in [cacheFaults, markFaults] {
        #expect(plan.count(of: .read) == 0 && plan.count(of: .pread) == 0, "\(plan.trace)")
        #expect(plan.count(of: .openat) == 0 && plan.count(of: .open) == 0, "\(plan.trace)")
        #expect(plan.count(of: .flock) == 0 && plan.count(of: .close) == 0, "\(plan.trace)")
        #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .fdatasync) == 0)
      }
    }
    // Outside a gate's check, each store still polls for itself.
    markFaults.resetCounts()
    _ = try gate.marks.read()
    #expect(markFaults.count(of: .poll) == 1 && markFaults.count(of: .fstatat) == 1)
  }

  /// The item store's changes and the mark record's (the store-wide ones are among the first).
  static let gateChanges: [Change] = changes + markRecordChanges

  /// Every change to either store between two repeated checks of one gate is seen by the very
  /// next check, though only one of the stores polls the shared watch in it: its decision is
  /// the one a gate over new store values makes at the same clock.
  @Test(
    .enabled(
      if: watchAvailable,
      "needs inotify (Linux) and a local file system for the temporary directory"),
    arguments: gateChanges)
  func everyChangeBetweenTwoRepeatedGateChecksIsSeenByTheNextOne(_ change: Change) throws {
    let (parent, path) = try Self.makeStore()
    defer {
      for name in ["", "cache", "cache/items"] { _ = chmod(path + "/" + name, 0o700) }
      parent.remove()
    }
    try FileManager.default.copyItem(
      atPath: path + "/clock-mark", toPath: parent.appending("older"))
    _ = try FileClockMarkStore(atPath: path).observe(
      resolution: .zero, readingClocks: { FileClockMarkStoreKeptOpenTests.at(5) })
    let cacheFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let markFaults = SyscallFaultPlan(allowsChangeWatch: true)
    let gate = try Self.gate(path, cacheFaults: cacheFaults, markFaults: markFaults)
    for _ in 0..<3 { _ = gate.checkEligibility() }
    markFaults.resetCounts()
    let before = gate.checkEligibility()
    #expect(markFaults.count(of: .pread) == 0, "served from the watch before the change")
    #expect(Self.outcome(before) == Self.outcome(try Self.gate(path).checkEligibility()))
    try change.make(parent, path)
    let after = gate.checkEligibility()
    #expect(Self.outcome(after) == Self.outcome(try Self.gate(path).checkEligibility()))
    #expect(
      Self.outcome(gate.checkEligibility()) == Self.outcome(try Self.gate(path).checkEligibility()),
      "and the next one agrees too")
  }
}
