import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The path watch (``PathWatch``): with it, a repeated read whose watch reports nothing makes no
/// `lstat` of the store path; a store directory, or any directory above it, renamed, replaced by
/// another directory or by a symbolic link between two repeated reads is still noticed by the
/// next one, which answers as a store opened afresh (the directory now at the path gets a path
/// watch of its own when the store keeps it open).
@Suite struct PathWatchTests {
  /// Whether this machine's temporary directory can hold a store with a path watch (Linux, every
  /// directory of the path on a local file system and watchable, inotify instances left).
  static let pathWatchAvailable: Bool = {
    guard let parent = try? TemporaryStoreDirectory(prefix: "path-watch-probe") else {
      return false
    }
    defer { parent.remove() }
    let system = Syscalls()
    guard let fd = try? system.open(parent.path, [.readOnly, .directory]),
      let status = try? system.fstat(fd)
    else { return false }
    defer { system.closeIgnoringErrors(fd) }
    guard let watch = StoreChangeWatch.open(system, watching: [fd]) else { return false }
    defer { watch.close(system) }
    guard
      let path = PathWatch.arm(
        system, in: watch, path: DirectoryCacheStore.unfollowedPath(parent.path), directory: fd,
        device: status.device, inode: status.inode)
    else { return false }
    path.close(system)
    return true
  }()

  static let reason = "needs inotify (Linux) and every directory of the temporary path watchable"

  static func plan() -> SyscallFaultPlan {
    SyscallFaultPlan(allowsChangeWatch: true, allowsPathWatch: true)
  }

  /// `top/a/store` with 2 items and `top/b/store` with 5, each with a mark, under `parent`.
  static func makeStores(_ parent: TemporaryStoreDirectory) throws -> String {
    for directory in ["top", "top/a", "top/b", "top/a/store", "top/b/store", "other"] {
      try FileManager.default.createDirectory(
        atPath: parent.appending(directory), withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    }
    for (name, count) in [("a", 2), ("b", 5)] {
      let path = parent.appending("top/\(name)/store")
      try DirectoryCacheStoreKeptOpenTests.commit(path, count: count)
      _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: {
        FileClockMarkStoreKeptOpenTests.at(0)
      })
    }
    return parent.appending("top/a/store")
  }

  /// The `lstat`s (`fstatat`) of the next summary of `store`, whether it was served from the
  /// watch, and its answer.
  static func summary(_ store: DirectoryCacheStore, _ plan: SyscallFaultPlan) -> (
    lstats: Int, watched: Bool, answer: Result<ItemTimeSummary, StoreError>
  ) {
    plan.resetCounts()
    let answer = StoreChangeWatchTests.answer(store)
    let watched = plan.count(of: .pread) == 0 && plan.count(of: .openat) == 0
    return (plan.count(of: .fstatat), watched, answer)
  }

  /// Whether one of the next few summaries of `store` (2 items) is served from the watch without
  /// an lstat (another process changing a neighbour's attributes in `/tmp` sends one to the full
  /// check now and then).
  static func servedWithoutLstat(_ store: DirectoryCacheStore, _ plan: SyscallFaultPlan) -> Bool {
    for _ in 0..<5 {
      let next = summary(store, plan)
      #expect((try? next.answer.get().count) == 2)
      if next.watched && next.lstats == 0 { return true }
    }
    return false
  }

  @Test(.enabled(if: pathWatchAvailable, "\(reason)"))
  func aWatchedRepeatedSummaryMakesNoLstat() throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let plan = Self.plan()
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    // Every summary is served from the watch without an lstat, or (when another process
    // changed the attributes of an entry in a directory above, such as `/tmp`, which inotify
    // reports to that directory's watch) takes the full check; never the lstat of a store
    // whose path watch ended.
    var withoutLstat = 0
    for _ in 1...5 {
      plan.resetCounts()
      #expect(try store.summary() == (try StoreChangeWatchTests.fresh(path).get()))
      #expect(plan.count(of: .poll) == 1, "one poll of the watch per summary")
      let full = plan.count(of: .pread) > 0
      #expect(full || plan.count(of: .fstatat) == 0, "\(plan.trace)")
      if !full {
        withoutLstat += 1
        #expect(plan.count(of: .open) == 0 && plan.count(of: .openat) == 0)
        #expect(plan.count(of: .close) == 0 && plan.count(of: .flock) == 0)
      }
    }
    #expect(withoutLstat > 0)
  }

  /// One change of the store path between two repeated summaries (`top/a/store` named).
  struct Swap: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let make: @Sendable (_ parent: TemporaryStoreDirectory) throws -> Void
  }

  static func move(_ parent: TemporaryStoreDirectory, _ from: String, _ to: String) {
    #expect(rename(parent.appending(from), parent.appending(to)) == 0, "rename \(from) \(to)")
  }

  static func link(_ parent: TemporaryStoreDirectory, _ target: String, _ name: String) {
    #expect(symlink(parent.appending(target), parent.appending(name)) == 0, "symlink \(name)")
  }

  static let swaps: [Swap] = [
    Swap(testDescription: "the store directory renamed away and another renamed in") { parent in
      move(parent, "top/a/store", "top/a/old-store")
      move(parent, "top/b/store", "top/a/store")
    },
    Swap(testDescription: "the store directory replaced by a symbolic link") { parent in
      move(parent, "top/a/store", "top/a/old-store")
      link(parent, "top/b/store", "top/a/store")
    },
    Swap(testDescription: "its parent renamed away and another renamed in") { parent in
      move(parent, "top/a", "top/old-a")
      move(parent, "top/b", "top/a")
    },
    Swap(testDescription: "its parent replaced by a symbolic link") { parent in
      move(parent, "top/a", "top/old-a")
      link(parent, "top/b", "top/a")
    },
    Swap(testDescription: "two levels up renamed away and another renamed in") { parent in
      // `other/a/store` is the 5-item store once `top` is `other`.
      move(parent, "top/b", "other/a")
      move(parent, "top", "old-top")
      move(parent, "other", "top")
    },
    Swap(testDescription: "two levels up replaced by a symbolic link") { parent in
      move(parent, "top/b", "other/a")
      move(parent, "top", "old-top")
      link(parent, "other", "top")
    },
  ]

  @Test(.enabled(if: pathWatchAvailable, "\(reason)"), arguments: swaps)
  func everySwapOfTheStorePathIsNoticed(_ swap: Swap) throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-swap")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let plan = Self.plan()
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    #expect(Self.servedWithoutLstat(store, plan), "the path watch is on")
    try swap.make(parent)
    let after = Self.summary(store, plan)
    #expect(after.lstats >= 1, "the full check, which looks at the path")
    #expect(after.answer == StoreChangeWatchTests.fresh(path))
    #expect((try? after.answer.get().count) != 2, "not the store kept open")
    for _ in 0..<2 {
      #expect(Self.summary(store, plan).answer == StoreChangeWatchTests.fresh(path))
    }
  }

  /// A change of the mode of a directory above the store ends the path watch (the path may no
  /// longer be usable to this user); the answers stay those of a fresh store.
  @Test(.enabled(if: pathWatchAvailable, "\(reason)"))
  func aModeChangeAboveTheStoreEndsThePathWatch() throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-mode")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let plan = Self.plan()
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    #expect(Self.servedWithoutLstat(store, plan), "the path watch is on")
    #expect(chmod(parent.appending("top"), 0o700) == 0)
    let after = Self.summary(store, plan)
    #expect(!after.watched)
    #expect(after.answer == StoreChangeWatchTests.fresh(path))
    for _ in 0..<3 {
      let later = Self.summary(store, plan)
      #expect(later.lstats >= 1, "the path watch ended: the lstat again")
      #expect(later.answer == StoreChangeWatchTests.fresh(path))
    }
  }

  /// One place beside the store path where another process changes an entry's attributes.
  struct Neighbour: Sendable, CustomTestStringConvertible {
    let testDescription: String
    /// The entry, relative to the temporary directory (`""`: an entry of the temporary
    /// directory itself, such as `/tmp`).
    let entry: String
  }

  static let neighbours: [Neighbour] = [
    Neighbour(testDescription: "a file beside the store directory", entry: "top/a/neighbour"),
    Neighbour(testDescription: "a directory beside its parent (holding a store)", entry: "top/b"),
    Neighbour(testDescription: "a file in the temporary directory", entry: "neighbour"),
  ]

  /// inotify reports a `chmod` or `touch` of an entry of a directory above the store to that
  /// directory's watch: such events are drained and ignored (the summary after them reads the
  /// queue, makes no `lstat` and no full check, and the path watch goes on); then a real move of
  /// the store's parent is still noticed.
  @Test(.enabled(if: pathWatchAvailable, "\(reason)"), arguments: neighbours)
  func aNeighboursEventsNeitherEndThePathWatchNorCostAFullCheck(_ neighbour: Neighbour) throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-neighbour")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let entry = parent.appending(neighbour.entry)
    if !FileManager.default.fileExists(atPath: entry) {
      #expect(FileManager.default.createFile(atPath: entry, contents: nil))
    }
    let plan = Self.plan()
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    #expect(Self.servedWithoutLstat(store, plan), "the path watch is on")
    for round in 0..<3 {
      #expect(chmod(entry, round % 2 == 0 ? 0o700 : 0o600) == 0)
      #expect(utimes(entry, nil) == 0)
      let after = Self.summary(store, plan)
      #expect(plan.count(of: .read) >= 1, "the neighbour's events were drained: \(plan.trace)")
      #expect(after.watched && after.lstats == 0, "\(plan.trace)")
      #expect((try? after.answer.get().count) == 2)
      let next = Self.summary(store, plan)
      #expect(next.watched && next.lstats == 0 && plan.count(of: .read) == 0, "\(plan.trace)")
    }
    Self.move(parent, "top/a", "top/old-a")
    Self.move(parent, "top/b", "top/a")
    let moved = Self.summary(store, plan)
    #expect(moved.lstats >= 1, "the full check, which looks at the path")
    #expect((try? moved.answer.get().count) == 5)
    #expect(moved.answer == StoreChangeWatchTests.fresh(path))
  }

  /// The file systems the path watch relies on: not btrfs (a subvolume deleted above the store
  /// reports nothing to any watch), nor any file system the change watch does not take.
  @Test func thePathWatchReliesOnExtXfsAndTmpfsOnly() {
    #expect(PathWatch.proves(onFileSystem: 0xEF53))
    #expect(PathWatch.proves(onFileSystem: 0x5846_5342))
    #expect(PathWatch.proves(onFileSystem: 0x0102_1994))
    #expect(!PathWatch.proves(onFileSystem: 0x9123_683E), "btrfs")
    #expect(!PathWatch.proves(onFileSystem: 0x6969), "NFS")
    #expect(PathWatch.fileSystems.isSubset(of: StoreChangeWatch.localFileSystems))
  }

  /// A store whose file system reports btrfs (or NFS, which the change watch itself refuses):
  /// on btrfs the change watch still serves repeated summaries, but every one makes its
  /// `lstat` of the store path, since no watch sees a subvolume deleted above the store; on
  /// ext4 the path watch takes the `lstat` away. The plan reports the type in place of the
  /// real one, so this runs on any file system the path watch works on.
  @Test(
    .enabled(if: pathWatchAvailable, "\(reason)"),
    arguments: [
      (Int64(0x9123_683E), "btrfs: change watch, lstat"),
      (Int64(0x6969), "NFS: no watch at all"),
      (Int64(0xEF53), "ext4: change watch and path watch"),
    ])
  func theFileSystemTypeDecidesWhatIsWatched(_ type: Int64, _ expected: String) throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-type")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let plan = SyscallFaultPlan(allowsChangeWatch: true, allowsPathWatch: true)
    plan.reportedFileSystemType = type
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    var served = 0
    for _ in 0..<3 {
      let next = Self.summary(store, plan)
      #expect(next.answer == StoreChangeWatchTests.fresh(path))
      if expected.hasPrefix("ext4") {
        if next.watched && next.lstats == 0 { served += 1 }
      } else {
        #expect(next.lstats >= 1, "\(expected): \(plan.trace)")
        if next.watched { served += 1 }
      }
    }
    // Another process's change in /tmp can send one summary to the full check; not all three.
    if expected.hasPrefix("NFS") {
      #expect(served == 0, "\(expected): no change watch, every file read: \(plan.trace)")
    } else {
      #expect(served >= 1, "\(expected): \(plan.trace)")
    }
  }

  /// A directory of the path whose file system the path watch cannot learn (its `fstatfs`
  /// fails: it could be btrfs) keeps the `lstat` of every repeated summary.
  @Test(.enabled(if: pathWatchAvailable, "\(reason)"))
  func aDirectoryOfAnUnknownFileSystemKeepsTheLstat() throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-fs")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    // The change watch's own `fstatfs` (the store directory) succeeds; the path watch's first
    // (the root directory) fails.
    let plan = SyscallFaultPlan(
      [.init(kind: .fstatfs, occurrence: 2, errno: Errno(rawValue: EIO))],
      allowsChangeWatch: true, allowsPathWatch: true)
    let store = try StoreChangeWatchTests.watchedCache(path, plan)
    for _ in 0..<3 {
      let next = Self.summary(store, plan)
      #expect(next.lstats >= 1, "\(plan.trace)")
      #expect(next.answer == StoreChangeWatchTests.fresh(path))
    }
  }

  /// inotify events as `read` returns them: (watch descriptor, mask, name length).
  static func events(_ list: [(Int32, UInt32, UInt32)]) -> [UInt8] {
    var bytes: [UInt8] = []
    for (watched, mask, length) in list {
      withUnsafeBytes(of: watched) { bytes += $0 }
      withUnsafeBytes(of: mask) { bytes += $0 }
      withUnsafeBytes(of: UInt32(0)) { bytes += $0 }
      withUnsafeBytes(of: length) { bytes += $0 }
      bytes += [UInt8](repeating: 0, count: Int(length))
    }
    return bytes
  }

  /// Each kind of event, sorted: watches 1 and 2 are directories above the store, 3 the store
  /// directory, 4 a file in it.
  @Test func eventsAreSortedIntoNeighboursStoreChangesAndMovesOfThePath() {
    #if os(Linux)
      let attrib = UInt32(IN_ATTRIB)
      let cases: [(events: [(Int32, UInt32, UInt32)], proving: Bool, expected: PathWatch.Events)] =
        [
          ([(1, attrib, 16), (2, attrib, 16)], true, .init()),
          ([(2, attrib, 16), (1, attrib, 0)], true, .init(storeChanged: false, pathMoved: true)),
          ([(1, UInt32(IN_MOVE_SELF), 0)], true, .init(storeChanged: false, pathMoved: true)),
          ([(1, UInt32(IN_MOVE_SELF), 0), (2, attrib, 0)], false, .init()),
          ([(1, attrib, 16), (4, UInt32(IN_MODIFY), 0)], true, .init(storeChanged: true)),
          ([(3, attrib, 0)], true, .init(storeChanged: true)),
          ([(3, attrib, 32)], true, .init(storeChanged: true)),
          ([(3, UInt32(IN_MOVE_SELF), 0)], true, .init(storeChanged: true, pathMoved: true)),
          ([(-1, UInt32(IN_Q_OVERFLOW), 0)], false, .init(storeChanged: true, pathMoved: true)),
        ]
      for (list, proving, expected) in cases {
        let bytes = Self.events(list)
        let found = bytes.withUnsafeBytes {
          PathWatch.classify($0, ancestors: [1, 2], store: 3, proving: proving)
        }
        #expect(found == expected, "\(list), proving: \(proving)")
      }
      // A record cut short (never from the kernel) is taken for everything.
      let cut = Array(Self.events([(1, attrib, 16)]).prefix(8))
      let found = cut.withUnsafeBytes {
        PathWatch.classify($0, ancestors: [1, 2], store: 3, proving: true)
      }
      #expect(found == .init(storeChanged: true, pathMoved: true))
    #endif
  }

  /// Both stores of a gate: one `poll` for the check and no `lstat`; with no fault plan (as in
  /// production), an ancestor swapped between two checks is noticed by the next one, which
  /// decides as a gate opened afresh.
  @Test(.enabled(if: pathWatchAvailable, "\(reason)"))
  func aRepeatedGateCheckMakesNoLstatAndStillSeesASwap() throws {
    let parent = try TemporaryStoreDirectory(prefix: "path-watch-gate")
    defer { parent.remove() }
    let path = try Self.makeStores(parent)
    let cacheFaults = Self.plan()
    let markFaults = Self.plan()
    let traced = try StoreChangeWatchTests.gate(
      path, cacheFaults: cacheFaults, markFaults: markFaults)
    let production = try StoreChangeWatchTests.gate(path)
    for _ in 0..<3 {
      _ = traced.checkEligibility()
      _ = production.checkEligibility()
    }
    // As in the item store's test: a check is either served without an lstat or (a neighbour's
    // attributes changed in a directory above) a full check, never an lstat alone.
    var withoutLstat = 0
    for _ in 0..<5 {
      cacheFaults.resetCounts()
      markFaults.resetCounts()
      let decision = traced.checkEligibility()
      #expect(decision.items?.count == 2)
      #expect(cacheFaults.count(of: .poll) == 1, "\(cacheFaults.trace)")
      let full = cacheFaults.count(of: .pread) > 0 || markFaults.count(of: .pread) > 0
      if !full {
        withoutLstat += 1
        #expect(cacheFaults.count(of: .fstatat) == 0, "\(cacheFaults.trace)")
        #expect(
          markFaults.count(of: .poll) == 0 && markFaults.count(of: .fstatat) == 0,
          "\(markFaults.trace)")
      }
    }
    #expect(withoutLstat > 0)
    Self.move(parent, "top/a", "top/old-a")
    Self.move(parent, "top/b", "top/a")
    for gate in [traced, production] {
      let after = gate.checkEligibility()
      let fresh = try StoreChangeWatchTests.gate(path).checkEligibility()
      #expect(StoreChangeWatchTests.outcome(after) == StoreChangeWatchTests.outcome(fresh))
      #expect(after.items?.count == 5)
    }
  }
}
