import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Hostile store contents under the directory cache store: nothing blocks, no length from disk
/// drives an allocation, another user's files are refused, and the online path recovers.
@Suite struct DirectoryCacheStoreHostileTests {
  typealias Base = DirectoryCacheStoreTests

  /// A store with three items (`item-0` … `item-2`).
  struct Store {
    let directory: TemporaryStoreDirectory
    let store: DirectoryCacheStore

    init() throws {
      directory = try TemporaryStoreDirectory(prefix: "hostile")
      store = DirectoryCacheStore(atPath: directory.path)
      try Base.fill(store, count: 3)
    }

    func path(_ relative: String) -> String { directory.appending(relative) }

    func remove() {
      _ = chmod(directory.path, 0o700)
      directory.remove()
    }
  }

  static func code(_ body: () throws -> Void) -> CacheStoreError.Code? {
    do {
      try body()
      return nil
    } catch let error as CacheStoreError {
      return error.code
    } catch {
      return nil
    }
  }

  /// Replaces `relative` by a FIFO, a directory or a symbolic link.
  static let wrongTypes: [String] = ["fifo", "directory", "link"]

  static func replace(_ path: String, with kind: String) throws {
    try? FileManager.default.removeItem(atPath: path)
    switch kind {
    case "fifo": try #require(mkfifo(path, 0o600) == 0)
    case "directory":
      try FileManager.default.createDirectory(
        atPath: path + "/inner", withIntermediateDirectories: true)
    default:
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
    }
  }

  // Kind 1: nothing in a store can block.

  @Test(arguments: wrongTypes)
  func aWrongTypeUnderAKeyIsNotARegularFileAtOnceAndNeverWaitedOn(_ kind: String) throws {
    let s = try Store()
    defer { s.remove() }
    try Self.replace(s.path("cache/items/item-1"), with: kind)
    neverWaitingOn([s.path("cache/items/item-1")], "no open waited") {
      #expect(
        Self.code { _ = try s.store.item(forKey: CacheItemKey("item-1")) } == .notARegularFile)
      #expect(Self.code { _ = try s.store.summary() } == .notARegularFile)
    }
    #expect(try s.store.item(forKey: CacheItemKey("item-0"))?.payload == Data("payload-0".utf8))
  }

  @Test(arguments: ["index", "lock", "pending"], wrongTypes)
  func aWrongTypeInPlaceOfAnIndexFileNeverBlocksAndTheSummaryIsRight(
    _ name: String, _ kind: String
  ) throws {
    let s = try Store()
    defer { s.remove() }
    try Self.replace(s.path("cache/" + name), with: kind)
    let summary = try neverWaitingOn([s.path("cache/" + name)], "no open waited") {
      try s.store.summary()
    }
    #expect(summary.count == 3)
    #expect(summary.oldest == Base.t(1000))
  }

  // Kind 2: no length read from disk drives an allocation unchecked.

  @Test func aOneTebibyteSparseItemIsUnreadableWithoutAllocatingIt() throws {
    let s = try Store()
    defer { s.remove() }
    let handle = try #require(FileHandle(forWritingAtPath: s.path("cache/items/item-2")))
    try handle.truncate(atOffset: 1 << 40)
    try handle.close()
    #expect(Self.code { _ = try s.store.item(forKey: CacheItemKey("item-2")) } == .itemUnreadable)
  }

  @Test(arguments: [UInt64(1) << 30 + 1, .max])
  func anItemHeaderClaimingMoreThanTheMaximumIsUnreadable(_ length: UInt64) throws {
    let s = try Store()
    defer { s.remove() }
    let path = s.path("cache/items/item-0")
    var bytes = [UInt8](try Base.bytes(path))
    for index in 0..<8 { bytes[16 + index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(Self.code { _ = try s.store.item(forKey: CacheItemKey("item-0")) } == .itemUnreadable)
  }

  @Test(
    arguments: [
      (UInt64.max, UInt64.max), (UInt64(1) << 21, UInt64(1) << 21 * 10), (UInt64(3), UInt64.max),
      (UInt64(3), UInt64(5)),
    ] as [(UInt64, UInt64)])
  func anIndexHeaderOutOfBoundsIsRebuilt(_ count: UInt64, _ bodyLength: UInt64) throws {
    let s = try Store()
    defer { s.remove() }
    let path = s.path("cache/index")
    var bytes = [UInt8](try Base.bytes(path))
    func put(_ value: UInt64, at offset: Int) {
      for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
    put(count, at: 8)
    put(bodyLength, at: 56)
    let crc = CacheFormat.crc(bytes[0..<68])
    for index in 0..<4 { bytes[68 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(DirectoryCacheStore.decodeIndexHeader(Array(bytes[0..<72])) == nil || count == 3)
    #expect(try s.store.summary().count == 3)
  }

  // Kind 3: a store that another user can write is not a store.

  @Test(arguments: [0o777, 0o770, 0o707, 0o720])
  func aStoreDirectoryOthersMayWriteIsInsecure(_ mode: Int) throws {
    let s = try Store()
    defer { s.remove() }
    #expect(chmod(s.directory.path, mode_t(mode)) == 0)
    do {
      _ = try s.store.summary()
      Issue.record("an insecure store was used")
    } catch {
      #expect(error.code == .insecureStore)
      #expect(error.reason.contains(s.directory.path), "names the path")
    }
    var changes = CacheChanges()
    changes.write(CacheItemKey("new"), Data(), writtenAt: Base.t(5000))
    #expect(Self.code { try s.store.commit(changes) } == .insecureStore)
    #expect(
      try Base.mode(s.directory.path) == mode, "never tightened: this process did not create it")
  }

  @Test(
    .enabled(if: geteuid() == 0, "chown to another uid needs root"),
    arguments: ["", "cache", "cache/items", "cache/index"])
  func aDirectoryOrIndexOfAnotherUserIsInsecure(_ relative: String) throws {
    let s = try Store()
    defer { s.remove() }
    #expect(chown(relative.isEmpty ? s.directory.path : s.path(relative), 65534, 65534) == 0)
    #expect(Self.code { _ = try s.store.summary() } == .insecureStore)
  }

  @Test(.enabled(if: geteuid() == 0, "chown to another uid needs root"))
  func anItemOfAnotherUserIsInsecureWhenRead() throws {
    let s = try Store()
    defer { s.remove() }
    #expect(chown(s.path("cache/items/item-1"), 65534, 65534) == 0)
    #expect(Self.code { _ = try s.store.item(forKey: CacheItemKey("item-1")) } == .insecureStore)
  }

  @Test func aDirectoryThisProcessCreatesIsPrivate() throws {
    let parent = try TemporaryStoreDirectory(prefix: "hostile-new")
    defer { parent.remove() }
    let store = DirectoryCacheStore(atPath: parent.appending("store"))
    try Base.fill(store, count: 1)
    for relative in ["store", "store/cache", "store/cache/items", "store/cache/tmp"] {
      #expect(try Base.mode(parent.appending(relative)) == 0o700, "\(relative)")
    }
    for relative in ["store/cache/index", "store/cache/lock", "store/cache/items/item-0"] {
      #expect(try Base.mode(parent.appending(relative)) == 0o600, "\(relative)")
    }
  }

  // Kind 4: no spelling of a path follows a symbolic link.

  @Test(arguments: ["link", "link/", "link/.", "link//.//", "./link"])
  func noSpellingOfALinkedStoreDirectoryIsFollowed(_ spelling: String) throws {
    let s = try Store()
    defer { s.remove() }
    let parent = try TemporaryStoreDirectory(prefix: "hostile-link")
    defer { parent.remove() }
    try FileManager.default.createSymbolicLink(
      atPath: parent.appending("link"), withDestinationPath: s.directory.path)
    let path =
      spelling.hasPrefix("./")
      ? parent.path + "/" + spelling : parent.appending(spelling)
    let linked = DirectoryCacheStore(atPath: path)
    #expect(Self.code { _ = try linked.summary() } == .storeUnusable)
    #expect(Self.code { _ = try linked.item(forKey: CacheItemKey("item-0")) } == .storeUnusable)
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-0"), Data("x".utf8), writtenAt: Base.t(9000))
    #expect(Self.code { try linked.commit(changes) } == .storeUnusable)
    #expect(try s.store.item(forKey: CacheItemKey("item-0"))?.payload == Data("payload-0".utf8))
  }

  /// The directories above the store may be links, the one just above included: only the
  /// store directory's own name is never followed. (A parent that was a link was refused with
  /// `ENOTDIR` and read as a missing store.)
  @Test(arguments: ["link/store", "link/./store/", "link/sub/store", "./link/store"])
  func aStoreBelowALinkedParentIsOpenedThroughIt(_ spelling: String) throws {
    let parent = try TemporaryStoreDirectory(prefix: "hostile-parent-link")
    defer { parent.remove() }
    try FileManager.default.createDirectory(
      atPath: parent.appending("real/sub"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: parent.appending("link"), withDestinationPath: parent.appending("real"))
    let path =
      spelling.hasPrefix("./") ? parent.path + "/" + spelling : parent.appending(spelling)
    let store = DirectoryCacheStore(atPath: path)
    try Base.fill(store, count: 2)
    #expect(try store.summary().count == 2)
    #expect(try store.item(forKey: CacheItemKey("item-1"))?.payload == Data("payload-1".utf8))
    let real = parent.appending(
      "real/" + (spelling.contains("sub") ? "sub/" : "") + "store/cache/items/item-1")
    #expect(FileManager.default.fileExists(atPath: real), "written in the link's target")
  }

  /// A parent that is a link to a file, a dangling link, or a link loop: no store (a missing
  /// one reads as an empty cache), and a typed error, never a crash or a hang.
  @Test(arguments: ["file", "dangling", "loop"])
  func aStoreBelowABadLinkedParentIsRefused(_ kind: String) throws {
    let parent = try TemporaryStoreDirectory(prefix: "hostile-parent-bad")
    defer { parent.remove() }
    let link = parent.appending("link")
    switch kind {
    case "file":
      try Data("x".utf8).write(to: URL(fileURLWithPath: parent.appending("file")))
      try FileManager.default.createSymbolicLink(
        atPath: link, withDestinationPath: parent.appending("file"))
    case "dangling":
      try FileManager.default.createSymbolicLink(
        atPath: link, withDestinationPath: parent.appending("missing"))
    default:
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: link)
    }
    let store = DirectoryCacheStore(atPath: link + "/store")
    if kind == "dangling" {
      #expect(try store.summary().count == 0, "a missing store directory is an empty cache")
    } else {
      #expect(Self.code { _ = try store.summary() } == .storeUnusable, "\(kind)")
    }
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-0"), Data("x".utf8), writtenAt: Base.t(9000))
    #expect(Self.code { try store.commit(changes) } == .storeUnusable, "\(kind)")
  }

  /// A path ending in `..` would reach, through a link before it, any directory above its
  /// target (`link/..` is the parent of wherever `link` points): refused before any system call,
  /// by the item store and the mark store alike, and nothing is made there.
  @Test(arguments: ["link/..", "link/../", "link/../.", "real/sub/..", "link/sub/.."])
  func aStorePathEndingInParentNameIsRefused(_ spelling: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "hostile-dotdot")
    defer { scratch.remove() }
    let elsewhere = scratch.appending("elsewhere")
    try FileManager.default.createDirectory(
      atPath: elsewhere + "/target/sub", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: scratch.appending("real/sub"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.appending("link"), withDestinationPath: elsewhere + "/target")
    let path = scratch.appending(spelling)
    let store = DirectoryCacheStore(atPath: path)
    #expect(Self.code { _ = try store.summary() } == .storeUnusable, "\(spelling)")
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-0"), Data("x".utf8), writtenAt: Base.t(9000))
    var commitError: CacheStoreError?
    do { try store.commit(changes) } catch let error as CacheStoreError { commitError = error }
    #expect(commitError?.code == .storeUnusable, "\(spelling)")
    #expect(
      commitError?.reason.contains("ends in '..'") == true, "\(String(describing: commitError))")
    var marks: StoreError?
    do {
      _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(
        now: SystemWallClock().now())
    } catch { marks = error }
    #expect(marks?.code == .storeUnusable, "\(spelling): \(String(describing: marks))")
    for directory in [elsewhere, elsewhere + "/target", scratch.path, scratch.appending("real")] {
      let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      #expect(
        !names.contains("cache") && !names.contains("clock-mark"), "\(spelling): \(directory)")
    }
  }

  @Test func aStorePathOfOnlyParentNamesIsRefused() {
    for path in ["..", "../", "../.."] {
      #expect(
        Self.code { _ = try DirectoryCacheStore(atPath: path).summary() } == .storeUnusable,
        "\(path)")
    }
  }

  @Test(arguments: [
    ("a/b/", "a", "b"), ("a/b/.", "a", "b"), ("/a//b/./.", "/a", "b"), ("b", ".", "b"),
    ("./b/", "./", "b"), ("/b", "/", "b"),
  ])
  func storePathsSplitIntoParentAndLastName(_ path: String, _ parent: String, _ name: String) {
    let split = SecureStoreFiles.split(path)
    #expect(split.name == name)
    #expect(split.parent == (parent == "./" ? "." : parent))
  }

  @Test(arguments: [".", "/", "a/..", "a/../", "./."])
  func pathsWithoutALastNameAreOpenedWhole(_ path: String) {
    #expect(SecureStoreFiles.split(path).parent == nil)
  }

  // Kind 8: an online sign-in always recovers the store.

  @Test(arguments: wrongTypes)
  func anOnlineCommitRemovesWhatIsNotAnItemAndWritesThroughIt(_ kind: String) throws {
    let s = try Store()
    defer { s.remove() }
    try Self.replace(s.path("cache/items/item-1"), with: kind)
    try Data("junk".utf8).write(to: URL(fileURLWithPath: s.path("cache/items/bad\u{7}name")))
    var changes = CacheChanges()
    changes.write(CacheItemKey("item-1"), Data("new".utf8), writtenAt: Base.t(7000))
    try s.store.commit(changes)
    #expect(try s.store.item(forKey: CacheItemKey("item-1"))?.payload == Data("new".utf8))
    #expect(try s.store.summary().count == 3)
    let names = try FileManager.default.contentsOfDirectory(atPath: s.path("cache/items"))
    #expect(names.sorted() == ["item-0", "item-1", "item-2"], "the junk entry is removed")
  }

  @Test(arguments: ["cache", "cache/items", "cache/tmp", "cache/index", "cache/lock"], wrongTypes)
  func anEmptyOnlineCommitRepairsAWrongTypeAnywhereInTheCache(_ relative: String, _ kind: String)
    throws
  {
    let s = try Store()
    defer { s.remove() }
    try Self.replace(s.path(relative), with: kind)
    try s.store.commit(CacheChanges())
    _ = try s.store.summary()
    var changes = CacheChanges()
    changes.write(CacheItemKey("fresh"), Data("f".utf8), writtenAt: Base.t(8000))
    try s.store.commit(changes)
    #expect(try s.store.item(forKey: CacheItemKey("fresh"))?.writtenAt == Base.t(8000))
    #expect(FileManager.default.fileExists(atPath: "/dev/zero"), "a link's target is untouched")
  }

  @Test func aPayloadLargerThanTheMaximumIsRefusedBeforeAnythingIsWritten() throws {
    #expect(CacheFormat.maximumPayloadLength == 1 << 30)
    let header = CacheFormat.ItemHeader(
      writtenAt: Base.t(0), payloadLength: CacheFormat.maximumPayloadLength + 1, checksum: 0)
    #expect(CacheFormat.checkItemSize(header, fileSize: Int64(1 << 30) + 29) == .oversized)
    let exact = CacheFormat.ItemHeader(writtenAt: Base.t(0), payloadLength: 3, checksum: 0)
    #expect(CacheFormat.checkItemSize(exact, fileSize: 31) == nil)
    #expect(CacheFormat.checkItemSize(exact, fileSize: 32) == .sizeMismatch)
  }

  // The staged sign-in's positions: `cache/next-<g>/`, its files, `pending`.

  /// Makes `cache/next-<generation>/` a staging of the live set (the index copied, an empty
  /// `items/`) and creates `pending`.
  static func makeStaging(_ s: Store, _ generation: UInt64) throws -> String {
    let staging = s.path("cache/next-\(generation)")
    try FileManager.default.createDirectory(
      atPath: staging + "/items", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: s.path("cache/index"), toPath: staging + "/index")
    try Data().write(to: URL(fileURLWithPath: s.path("cache/pending")))
    return staging
  }

  @Test(arguments: wrongTypes)
  func anOfflineReadOfACommittedStagingNeverWaitsNorReclaimsIt(_ kind: String) throws {
    let s = try Store()
    defer { s.remove() }
    let staging = try Self.makeStaging(s, 1)
    try Self.replace(staging + "/items/item-0", with: kind)
    try neverWaitingOn([staging + "/items/item-0"], "no open waited") { () throws in
      #expect(try s.store.summaryIfSettled() == nil)
      #expect(try s.store.summary(forGeneration: 1).count == 3)
      #expect(
        Self.code { _ = try s.store.item(forKey: CacheItemKey("item-0"), generation: 1) }
          == .notARegularFile)
      #expect(
        try s.store.item(forKey: CacheItemKey("item-1"), generation: 1)?.payload
          == Data("payload-1".utf8))
    }
    #expect(FileManager.default.fileExists(atPath: staging + "/index"), "offline left it")
    #expect(FileManager.default.fileExists(atPath: s.path("cache/pending")))
    // A sign-in without changes rolls it forward (the staged entry that is not a file is
    // dropped) and leaves a consistent store.
    #expect(
      try s.store.commitSignIn(CacheChanges(), storedGeneration: { 1 }, commitPoint: { true }))
    #expect(!FileManager.default.fileExists(atPath: staging))
    #expect(!FileManager.default.fileExists(atPath: s.path("cache/pending")))
    #expect(try s.store.summaryIfSettled()?.count == 3)
  }

  @Test func aStagingThatOthersMayWriteIsInsecureOfflineAndRemovedBySignIn() throws {
    let s = try Store()
    defer { s.remove() }
    let staging = try Self.makeStaging(s, 1)
    try #require(chmod(staging, 0o777) == 0)
    #expect(Self.code { _ = try s.store.summary(forGeneration: 1) } == .insecureStore)
    #expect(
      Self.code { _ = try s.store.item(forKey: CacheItemKey("item-0"), generation: 1) }
        == .insecureStore)
    #expect(FileManager.default.fileExists(atPath: staging))
    #expect(
      try s.store.commitSignIn(CacheChanges(), storedGeneration: { 1 }, commitPoint: { true }))
    #expect(!FileManager.default.fileExists(atPath: staging))
    #expect(try s.store.summary().count == 3)
  }

  @Test func aDeletedListNeverNamesAnythingOutsideTheItemsDirectory() throws {
    let s = try Store()
    defer { s.remove() }
    let staging = try Self.makeStaging(s, 1)
    let sentinel = s.path("sentinel")
    try Data("keep".utf8).write(to: URL(fileURLWithPath: sentinel))
    try Data("../../sentinel\n../index\n/\nitem-2".utf8)
      .write(to: URL(fileURLWithPath: staging + "/deleted"))
    #expect(
      try s.store.commitSignIn(CacheChanges(), storedGeneration: { 1 }, commitPoint: { true }))
    #expect(FileManager.default.fileExists(atPath: sentinel))
    // A key the list names is deleted from items/ (the list is the staging's own), and the
    // index follows what is there.
    let summary = try s.store.summary()
    #expect(summary.count == 2)
    #expect(try s.store.item(forKey: CacheItemKey("item-2")) == nil)
  }

  @Test(arguments: [Int64(1) << 40, 0])
  func aHugeOrEmptyDeletedListIsNotReadAndTheCommittedIndexDecides(_ size: Int64) throws {
    let s = try Store()
    defer { s.remove() }
    let staging = try Self.makeStaging(s, 1)
    let junk = s.path("cache/items/junk-key")
    try Data("not an item".utf8).write(to: URL(fileURLWithPath: junk))
    try Data().write(to: URL(fileURLWithPath: staging + "/deleted"))
    let handle = try #require(FileHandle(forWritingAtPath: staging + "/deleted"))
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
    #expect(
      try s.store.commitSignIn(CacheChanges(), storedGeneration: { 1 }, commitPoint: { true }))
    #expect(!FileManager.default.fileExists(atPath: junk), "the repair removed a non-item")
    #expect(try s.store.summary().count == 3)
  }

  /// A shared directory (mode 01777, like `/tmp`) given as the store itself is `insecure_store`
  /// from the cache and the mark store, and the message says to give the store a directory of
  /// its own, never to change or remove the shared one; a store directory of 0777 without the
  /// sticky bit keeps the usual advice (`chmod go-w`, or remove the store).
  @Test(arguments: [UInt32(0o1777), 0o777])
  func aSharedDirectoryAsTheStoreIsInsecureAndTheMessageSaysUseOneOfItsOwn(mode: UInt32) throws {
    let root = try TemporaryStoreDirectory(prefix: "shared-as-store")
    defer { root.remove() }
    let shared = root.appending("shared")
    #expect(mkdir(shared, 0o700) == 0 && chmod(shared, mode_t(mode)) == 0)
    let decision = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: shared), marks: FileClockMarkStore(atPath: shared),
      policy: try EligibilityPolicy(maxAge: .seconds(60), usesBootClockFloor: false)
    ).checkEligibility()
    let errors = [decision.cacheError, decision.markError].compactMap { $0 }
    #expect(!errors.isEmpty)
    for error in errors {
      #expect(error.code == .insecureStore, "\(error)")
      #expect(error.reason.contains("shared directory") == (mode == 0o1777), "\(error)")
      #expect(error.reason.contains("remove the store") == (mode == 0o777), "\(error)")
    }
    do {
      _ = try FileClockMarkStore(atPath: shared).resetAfterOnlineSignIn(
        now: SystemWallClock().now())
      Issue.record("reset a mark inside a shared directory")
    } catch {
      #expect(error.code == .insecureStore)
      #expect(error.reason.contains("shared directory") == (mode == 0o1777), "\(error)")
    }
  }
}
