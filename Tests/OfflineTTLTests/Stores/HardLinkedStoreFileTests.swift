import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A store file with a second name (a hard link into the store or out of it), in both file
/// stores: the offline paths refuse it (`insecure_store`, naming the path) without writing
/// through it, the long-lived mark store's reads without the lock notice it, and the online path
/// (a sign-in's reset, a commit) replaces it while the other name keeps its bytes.
@Suite struct HardLinkedStoreFileTests {
  typealias Direction = SecureStoreFilesTests.Direction

  static let base = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  static func at(_ seconds: Int64) -> ClockObservation {
    ClockObservation(
      wall: base.saturatingAdvanced(by: .seconds(seconds)),
      boot: BootClockReading(
        bootID: BootID(uuidString: "00000000-0000-4000-8000-000000000011")!,
        sinceBoot: .seconds(100 + seconds)))
  }

  /// A store signed in once (generation 1) with one item, and an `outside/` directory beside it.
  struct Scene {
    let parent: TemporaryStoreDirectory
    var store: String { parent.appending("store") }
    var marks: FileClockMarkStore { FileClockMarkStore(atPath: store) }
    var cache: DirectoryCacheStore { DirectoryCacheStore(atPath: store) }

    init() throws {
      parent = try TemporaryStoreDirectory(prefix: "hard-link")
      try FileManager.default.createDirectory(
        atPath: parent.appending("outside"), withIntermediateDirectories: true)
      _ = try FileClockMarkStore(atPath: parent.appending("store"))
        .resetAfterOnlineSignIn(readingClocks: { HardLinkedStoreFileTests.at(0) })
      var changes = CacheChanges()
      changes.write(CacheItemKey("token"), Data("token".utf8), writtenAt: base)
      try DirectoryCacheStore(atPath: parent.appending("store")).commit(changes)
    }

    /// Links `relative` with a name in `outside/` (see ``Direction``); returns that name.
    func link(_ relative: String, _ direction: Direction) throws -> String {
      let inside = store + "/" + relative
      let outside = parent.appending("outside/" + relative.replacingOccurrences(of: "/", with: "_"))
      switch direction {
      case .linkedIn:
        // A copy of the store's own bytes: a valid record, index or item outside the store.
        try FileManager.default.copyItem(atPath: inside, toPath: outside)
        try #require(unlink(inside) == 0)
        try #require(hardLink(outside, inside) == 0, "link: \(errno)")
      case .linkedOut:
        try #require(hardLink(inside, outside) == 0, "link: \(errno)")
      }
      return outside
    }
  }

  static func bytes(_ path: String) -> Data? {
    try? Data(contentsOf: URL(fileURLWithPath: path))
  }

  static func refusal(_ body: () throws -> Void) -> StoreError? {
    do {
      try body()
      return nil
    } catch let error as StoreError {
      return error
    } catch {
      return nil
    }
  }

  @Test(arguments: Direction.allCases)
  func aHardLinkedRecordIsRefusedOfflineAndTheResetReplacesIt(_ direction: Direction) throws {
    let scene = try Scene()
    defer { scene.parent.remove() }
    let outside = try scene.link("clock-mark", direction)
    let before = try #require(Self.bytes(outside))
    let observe = Self.refusal {
      _ = try scene.marks.observe(resolution: .zero, readingClocks: { Self.at(60) })
    }
    let read = Self.refusal { _ = try scene.marks.read() }
    for (label, refusal) in [("observe", observe), ("read", read)] {
      let error = try #require(refusal, "\(label) was not refused")
      #expect(error.code == StoreError.Code.insecureStore, "\(label): \(error)")
      #expect(error.message.contains(scene.store + "/clock-mark"), "\(label): \(error)")
      #expect(error.message.contains("sign in online"), "\(label) says what to do")
    }
    #expect(Self.bytes(outside) == before, "nothing was written through the other name")
    let reset = try scene.marks.resetAfterOnlineSignIn(readingClocks: { Self.at(120) })
    #expect(reset.generation == 2, "the linked record's generation was carried on")
    #expect(Self.bytes(outside) == before, "the reset replaced the file, never wrote through it")
    #expect(SecureStoreFilesTests.linkCount(outside) == 1)
    #expect(SecureStoreFilesTests.linkCount(scene.store + "/clock-mark") == 1)
    let observed = try scene.marks.observe(resolution: .zero, readingClocks: { Self.at(180) })
    #expect(observed.wrote && observed.current.generation == 2)
  }

  @Test func aRecordLinkedAfterItWasKeptOpenIsNoticedWithoutTheLock() throws {
    let scene = try Scene()
    defer { scene.parent.remove() }
    let store = scene.marks
    _ = try store.read()
    _ = try store.read()  // the second operation keeps the descriptors open
    let outside = try scene.link("clock-mark", .linkedOut)
    let before = try #require(Self.bytes(outside))
    let error = Self.refusal {
      _ = try store.observe(resolution: .zero, readingClocks: { Self.at(60) })
    }
    #expect(error?.code == .insecureStore, "\(String(describing: error))")
    #expect(Self.bytes(outside) == before)
  }

  @Test(arguments: Direction.allCases)
  func aHardLinkedMarkLockIsRefusedOfflineAndReplacedByTheReset(_ direction: Direction) throws {
    let scene = try Scene()
    defer { scene.parent.remove() }
    let outside = try scene.link("clock-mark.lock", direction)
    let before = try #require(Self.bytes(outside))
    let error = Self.refusal {
      _ = try scene.marks.observe(resolution: .zero, readingClocks: { Self.at(60) })
    }
    #expect(error?.code == .insecureStore, "\(String(describing: error))")
    _ = try scene.marks.resetAfterOnlineSignIn(readingClocks: { Self.at(120) })
    #expect(SecureStoreFilesTests.linkCount(scene.store + "/clock-mark.lock") == 1)
    #expect(SecureStoreFilesTests.linkCount(outside) == 1)
    #expect(Self.bytes(outside) == before)
  }

  @Test(arguments: ["cache/index", "cache/lock", "cache/items/token"], Direction.allCases)
  func aHardLinkedCacheFileIsRefusedWhenOpenedAndTheCommitReplacesIt(
    _ position: String, _ direction: Direction
  ) throws {
    let scene = try Scene()
    defer { scene.parent.remove() }
    let outside = try scene.link(position, direction)
    let before = try #require(Self.bytes(outside))
    let key = CacheItemKey("token")
    switch position {
    case "cache/index":
      let error = Self.refusal { _ = try scene.cache.summary() }
      #expect(error?.code == .insecureStore, "\(String(describing: error))")
      #expect(error?.message.contains(scene.store + "/cache/index") == true)
    case "cache/items/token":
      let error = Self.refusal { _ = try scene.cache.item(forKey: key) }
      #expect(error?.code == .insecureStore, "\(String(describing: error))")
      #expect(error?.key == key)
    default:
      // The lock is opened offline only while the index is not consistent: make it so.
      try Data().write(to: URL(fileURLWithPath: scene.store + "/cache/pending"))
      let error = Self.refusal { _ = try scene.cache.summary() }
      #expect(error?.code == .insecureStore, "\(String(describing: error))")
      try FileManager.default.removeItem(atPath: scene.store + "/cache/pending")
    }
    #expect(Self.bytes(outside) == before, "an offline read wrote nothing")
    // The online path: an item is written again (renamed over the linked name); the lock and
    // the index are replaced by any commit.
    var changes = CacheChanges()
    if position == "cache/items/token" {
      changes.write(key, Data("new".utf8), writtenAt: Self.base)
    }
    try scene.cache.commit(changes)
    #expect(Self.bytes(outside) == before, "the commit replaced the file, never wrote through it")
    #expect(SecureStoreFilesTests.linkCount(outside) == 1)
    #expect(SecureStoreFilesTests.linkCount(scene.store + "/" + position) == 1, "\(position)")
    #expect(try scene.cache.summary().count == 1)
    let payload = try scene.cache.item(forKey: key)?.payload
    #expect(payload == Data((position == "cache/items/token" ? "new" : "token").utf8))
  }
}
