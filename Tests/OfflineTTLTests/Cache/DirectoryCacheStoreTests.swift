import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct DirectoryCacheStoreTests {
  static func t(_ nanoseconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
  }

  /// Writes `count` items named `item-<i>` at times 1000 + i.
  static func fill(_ store: DirectoryCacheStore, count: Int) throws {
    var changes = CacheChanges()
    for index in 0..<count {
      changes.write(
        try CacheItemKey("item-\(index)"), Data("payload-\(index)".utf8),
        writtenAt: t(Int64(1000 + index)))
    }
    try store.commit(changes)
  }

  static func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
  }

  static func bytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
  }

  @Test func passesTheConformanceSuite() throws {
    var directories: [TemporaryStoreDirectory] = []
    defer { directories.forEach { $0.remove() } }
    try CacheItemStoreConformance.check {
      let directory = try TemporaryStoreDirectory(prefix: "cache-conformance")
      directories.append(directory)
      return DirectoryCacheStore(atPath: directory.path)
    }
  }

  @Test func missingStoreDirectoryIsAnEmptyCache() throws {
    let store = DirectoryCacheStore(atPath: "/nonexistent/offline-ttl/\(UUID().uuidString)")
    #expect(try store.summary() == .empty)
    #expect(try store.keys().isEmpty)
    #expect(try store.item(forKey: CacheItemKey("a")) == nil)
  }

  @Test func filesArePrivateAndLiveUnderCacheItems() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 2)
    #expect(try Self.mode(directory.appending("cache")) == 0o700)
    #expect(try Self.mode(directory.appending("cache/items")) == 0o700)
    #expect(try Self.mode(directory.appending("cache/items/item-0")) == 0o600)
    #expect(try Self.mode(directory.appending("cache/index")) == 0o600)
    let top = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(top == ["cache"], "nothing but cache/ beside the mark store's files")
    #expect(!FileManager.default.fileExists(atPath: directory.appending("cache/pending")))
  }

  @Test func writtenAtIsTheRecordedTimeNotTheFileModificationTime() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    var changes = CacheChanges()
    changes.write(CacheItemKey("k"), Data("v".utf8), writtenAt: Self.t(123_456_789))
    try store.commit(changes)
    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSince1970: 2_000_000_000)],
      ofItemAtPath: directory.appending("cache/items/k"))
    #expect(try store.item(forKey: CacheItemKey("k"))?.writtenAt == Self.t(123_456_789))
  }

  @Test func symbolicLinkItemIsUnreadableAndLeftAlone() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 1)
    let target = directory.appending("elsewhere")
    try Data("secret".utf8).write(to: URL(fileURLWithPath: target))
    try FileManager.default.createSymbolicLink(
      atPath: directory.appending("cache/items/link"), withDestinationPath: target)
    #expect {
      try store.item(forKey: CacheItemKey("link"))
    } throws: { ($0 as? CacheStoreError)?.code == .notARegularFile }
    // The directory changed behind the index: the rebuild meets the link and refuses.
    #expect {
      try store.summary()
    } throws: { ($0 as? CacheStoreError)?.code == .notARegularFile }
    let link = try FileManager.default.destinationOfSymbolicLink(
      atPath: directory.appending("cache/items/link"))
    #expect(link == target, "the link is left where it is")
  }

  @Test func corruptItemIsUnreadableOnReadAndNothingIsDeleted() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 3)
    let path = directory.appending("cache/items/item-1")
    var bytes = try Self.bytes(path)
    bytes[bytes.count - 1] ^= 0xFF
    try bytes.write(to: URL(fileURLWithPath: path))
    #expect {
      try store.item(forKey: CacheItemKey("item-1"))
    } throws: { error in
      let error = error as? CacheStoreError
      return error?.code == .itemUnreadable && error?.key == (try? CacheItemKey("item-1"))
    }
    #expect(try Self.bytes(path) == bytes, "the corrupt bytes are kept")
    #expect(try store.item(forKey: CacheItemKey("item-0"))?.payload == Data("payload-0".utf8))
  }

  @Test func truncatedItemHeaderRefusesTheSummaryOnRebuild() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 3)
    try Data([0x4F, 0x54]).write(
      to: URL(fileURLWithPath: directory.appending("cache/items/item-2")))
    try FileManager.default.removeItem(atPath: directory.appending("cache/index"))
    #expect {
      try store.summary()
    } throws: { ($0 as? CacheStoreError)?.code == .itemUnreadable }
    #expect(try Self.bytes(directory.appending("cache/items/item-2")) == Data([0x4F, 0x54]))
    #expect(try store.item(forKey: CacheItemKey("item-0")) != nil)
    // Still refused on the next call: the index is not written over an unreadable item.
    #expect(throws: CacheStoreError.self) { try store.summary() }
    // An online write that replaces it heals the cache.
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-2"), Data("new".utf8), writtenAt: Self.t(5000))
    try store.commit(changes)
    #expect(try store.summary().count == 3)
  }

  /// An index that does not agree with the items is read around, in memory: the offline summary
  /// changes no byte of the store (no index written, `pending` kept), and the next online
  /// commit repairs it.
  @Test(arguments: ["missing", "corrupt", "pending", "outOfBand"])
  func inconsistentIndexIsReadAroundWithoutWritingAnything(_ damage: String) throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 20)
    var expectedCount = 20
    switch damage {
    case "missing":
      try FileManager.default.removeItem(atPath: directory.appending("cache/index"))
    case "corrupt":
      try Data(repeating: 0, count: 72).write(
        to: URL(fileURLWithPath: directory.appending("cache/index")))
    case "pending":
      // A commit that crashed after renaming an item in, before its index.
      _ = FileManager.default.createFile(
        atPath: directory.appending("cache/pending"), contents: nil)
      try FileManager.default.copyItem(
        atPath: directory.appending("cache/items/item-19"),
        toPath: directory.appending("cache/items/extra"))
      expectedCount = 21
    default:
      // Another tool removed an item: the items directory changed behind the index.
      try FileManager.default.removeItem(atPath: directory.appending("cache/items/item-0"))
      expectedCount = 19
    }
    let before = try StoreBytes(directory.path)
    for _ in 0..<2 {
      let summary = try store.summary()
      #expect(summary.count == expectedCount)
      #expect(summary.newest == Self.t(1019))
      #expect(summary.oldest == Self.t(damage == "outOfBand" ? 1001 : 1000))
      #expect(try store.summaryIfSettled() == summary)
      #expect(try store.summary(forGeneration: 1) == summary)
    }
    let after = try StoreBytes(directory.path)
    #expect(after == before, "changed offline: \(after.differences(from: before))")
    // The next online commit repairs the index; the summary is then on the fast path.
    try store.commit(CacheChanges())
    #expect(!FileManager.default.fileExists(atPath: directory.appending("cache/pending")))
    #expect(try store.summary().count == expectedCount)
    let repaired = try StoreBytes(directory.path)
    _ = try store.summary()
    #expect(try StoreBytes(directory.path) == repaired)
  }

  @Test func readOnlyIndexRebuildIsInMemoryOnly() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(store, count: 4)
    try FileManager.default.removeItem(atPath: directory.appending("cache/index"))
    let plan = SyscallFaultPlan()
    plan.fail(.openat, occurrence: nil, with: .readOnlyFileSystem)
    // Every open fails: even the store is unusable, and that is a typed error, not a trap.
    #expect(throws: CacheStoreError.self) {
      try DirectoryCacheStore(atPath: directory.path, faults: plan).summary()
    }
    #expect(try store.summary().count == 4)
  }

  @Test func thousandsOfItemsCostAConstantNumberOfSyncs() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let plan = SyscallFaultPlan()
    let store = DirectoryCacheStore(atPath: directory.path, faults: plan)
    try Self.fill(store, count: 1_000)
    #expect(plan.count(of: .syncfs) == 1)
    #expect(plan.count(of: .fsync) <= 5, "fsyncs: \(plan.count(of: .fsync))")
    #expect(plan.count(of: .fdatasync) == 0)
    #expect(plan.count(of: .renameat) == 1_001)
    plan.resetCounts()
    let summary = try store.summary()
    #expect(summary.count == 1_000)
    #expect(plan.count(of: .pread) == 1, "the summary reads only the index header")
    #expect(plan.count(of: .openat) <= 3)
  }

  @Test func failedSyncLeavesCommittedItemsIntactAndTheNextCheckConsistent() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let plan = SyscallFaultPlan()
    let store = DirectoryCacheStore(atPath: directory.path, faults: plan)
    try Self.fill(store, count: 3)
    let before = try Self.bytes(directory.appending("cache/items/item-1"))
    plan.resetCounts()
    plan.fail(.syncfs, with: .ioError)
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-1"), Data("replaced".utf8), writtenAt: Self.t(9999))
    #expect {
      try store.commit(changes)
    } throws: { error in
      let error = error as? CacheStoreError
      return error?.code == .writeFailed && error?.errno == EIO
    }
    #expect(try Self.bytes(directory.appending("cache/items/item-1")) == before)
    let summary = try store.summary()
    #expect(summary.count == 3)
    #expect(summary.newest == Self.t(1002))
  }

  @Test func everyFailingStepOfACommitLeavesOldOrNewItemsAndAnHonestSummary() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    // Trace one commit, then fail each of its calls in turn.
    let tracer = SyscallFaultPlan()
    try Self.fill(DirectoryCacheStore(atPath: directory.path, faults: tracer), count: 2)
    var replacement = CacheChanges()
    replacement.write(CacheItemKey("item-0"), Data("new".utf8), writtenAt: Self.t(5000))
    replacement.delete(CacheItemKey("item-1"))
    tracer.resetCounts()
    try DirectoryCacheStore(atPath: directory.path, faults: tracer).commit(replacement)
    let trace = tracer.trace
    for index in trace.indices {
      let run = try TemporaryStoreDirectory(prefix: "cache-fault")
      defer { run.remove() }
      try Self.fill(DirectoryCacheStore(atPath: run.path), count: 2)
      let (kind, occurrence) = tracer.occurrence(at: index)
      let plan = SyscallFaultPlan()
      plan.fail(kind, occurrence: occurrence, with: .ioError)
      _ = try? DirectoryCacheStore(atPath: run.path, faults: plan).commit(replacement)
      let store = DirectoryCacheStore(atPath: run.path)
      let summary = try store.summary()
      let item0 = try #require(try store.item(forKey: CacheItemKey("item-0")))
      #expect([Self.t(1000), Self.t(5000)].contains(item0.writtenAt), "step \(index) \(kind)")
      #expect(
        item0.payload
          == (item0.writtenAt == Self.t(1000) ? Data("payload-0".utf8) : Data("new".utf8)))
      let item1 = try store.item(forKey: CacheItemKey("item-1"))
      #expect(summary.count == (item1 == nil ? 1 : 2), "step \(index) \(kind)")
      #expect(
        summary.newest == (item1 == nil ? item0.writtenAt : max(item0.writtenAt, Self.t(1001))))
    }
  }

  @Test func sharesTheStoreDirectoryWithTheMarkStoresFiles() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let markFile = directory.appending("clock-mark")
    try Data("mark bytes".utf8).write(to: URL(fileURLWithPath: markFile))
    let store = DirectoryCacheStore(atPath: directory.path)
    var changes = CacheChanges()
    changes.write(CacheItemKey("clock-mark"), Data("item".utf8), writtenAt: Self.t(1))
    try store.commit(changes)
    changes = CacheChanges()
    changes.removeAll()
    try store.commit(changes)
    #expect(try Self.bytes(markFile) == Data("mark bytes".utf8), "the mark's file is never touched")
  }

  @Test func twoStoreInstancesSeeEachOthersCommits() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let writer = DirectoryCacheStore(atPath: directory.path)
    let reader = DirectoryCacheStore(atPath: directory.path)
    try Self.fill(writer, count: 2)
    #expect(try reader.summary().count == 2)
    var changes = CacheChanges()
    changes.delete(CacheItemKey("item-0"))
    try writer.commit(changes)
    #expect(try reader.summary().count == 1)
    #expect(try reader.summary().oldest == Self.t(1001))
  }
}
