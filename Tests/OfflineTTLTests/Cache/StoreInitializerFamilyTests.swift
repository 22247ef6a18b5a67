import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// Every store is made the same ways: a path string (`atPath:`) or a file URL (`at:`), and the
/// in-memory siblings are named like the others. The earlier spellings keep working: the last
/// test uses them on purpose, so its deprecation warnings are expected.
@Suite struct StoreInitializerFamilyTests {
  static let payload = Data("secret".utf8)

  /// Signs in through stores made from the path and writes one item.
  func signedIn(_ directory: TemporaryStoreDirectory) throws {
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: directory.path),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: ManualWallClock(GateFixture.start), bootClock: nil)
    try gate.beginOnlineSession().write("token", Self.payload)
  }

  @Test func aPathAndAFileURLOpenTheSameStores() throws {
    let directory = try TemporaryStoreDirectory(prefix: "family")
    defer { directory.remove() }
    try signedIn(directory)
    let url = URL(fileURLWithPath: directory.path)
    #expect(try DirectoryCacheStore(at: url).item(forKey: "token")?.payload == Self.payload)
    #expect(DirectoryCacheStore(at: url).directoryPath == directory.path)
    #expect(DirectoryCacheStore(atPath: directory.path).directoryPath == directory.path)
    #expect(try FileClockMarkStore(at: url).read().generation == 1)
    #expect(FileClockMarkStore(at: url).directoryPath == directory.path)
  }

  @Test func theInMemorySiblingsAreNamedLikeTheOthers() throws {
    try signsInAndReads(InMemoryCacheStore())
  }

  /// Signs in through `cache` and reads the item back from it.
  func signsInAndReads(_ cache: any CacheItemStore) throws {
    let gate = OfflineAccessGate(
      cache: cache, marks: InMemoryClockMarkStore(),
      policy: try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      clock: ManualWallClock(GateFixture.start), bootClock: nil)
    try gate.beginOnlineSession().write("token", Self.payload)
    #expect(try cache.item(forKey: "token")?.payload == Self.payload)
  }

  @Test func theEarlierSpellingsKeepWorking() throws {
    let directory = try TemporaryStoreDirectory(prefix: "family-old")
    defer { directory.remove() }
    try signedIn(directory)
    let path: String = directory.path
    #expect(try DirectoryCacheStore(at: path).item(forKey: "token")?.payload == Self.payload)
    try signsInAndReads(InMemoryCacheItemStore())
  }
}
