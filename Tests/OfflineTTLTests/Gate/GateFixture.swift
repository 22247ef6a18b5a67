import Foundation
import OfflineTTL
import OfflineTTLTesting

/// A gate over test doubles (or a real directory cache), a manual clock and a week's max age.
struct GateFixture {
  /// Which item store backs the fixture.
  enum Backend: String, CaseIterable, CustomStringConvertible {
    case memory, directory
    var description: String { rawValue }
  }

  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let week = Duration.seconds(7 * 86_400)

  let clock = ManualWallClock(GateFixture.start)
  let marks: InMemoryClockMarkStore
  let cache: any CacheItemStore
  let gate: OfflineAccessGate
  private let directory: TemporaryStoreDirectory?

  init(
    _ backend: Backend = .memory, maxAge: Duration = GateFixture.week,
    trustOnFirstUse: Bool = false, markResolution: Duration = .zero,
    marks: InMemoryClockMarkStore = InMemoryClockMarkStore()
  ) throws {
    self.marks = marks
    switch backend {
    case .memory:
      cache = InMemoryCacheStore()
      directory = nil
    case .directory:
      let directory = try TemporaryStoreDirectory(prefix: "gate")
      cache = DirectoryCacheStore(atPath: directory.path)
      self.directory = directory
    }
    let policy = try EligibilityPolicy(
      maxAge: maxAge, trustOnFirstUse: trustOnFirstUse, usesBootClockFloor: false,
      markResolution: markResolution)
    gate = OfflineAccessGate(cache: cache, marks: marks, policy: policy, clock: clock)
  }

  func remove() { directory?.remove() }

  static func key(_ text: String) -> CacheItemKey { try! CacheItemKey(text) }

  /// Signs in and writes `items` (key → text) at the clock's current time.
  @discardableResult
  func signIn(_ items: [String: String] = ["token": "secret"]) throws -> OnlineSession {
    let session = try gate.beginOnlineSession()
    if !items.isEmpty {
      try session.write(contentsOf: items.map { (Self.key($0.key), Data($0.value.utf8)) })
    }
    return session
  }

  /// Every item's key, bytes and writtenAt.
  func snapshot() throws -> [CacheItemKey: CacheItem] {
    var result: [CacheItemKey: CacheItem] = [:]
    for key in try cache.keys() { result[key] = try cache.item(forKey: key) }
    return result
  }

  /// The stored mark, or nil.
  var storedMark: WallClockInstant? { try? marks.read().mark }
}
