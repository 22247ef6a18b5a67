import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// A writer of a sealed store without its key puts back older files it copied, and removes or
/// damages what would show they are old; the next online sign-in must not make them authentic.
///
/// - An item copied from an older commit (or one signed out since), with the index removed,
///   altered or replaced by an older authentic one: a sign-in carries old items only from the
///   live index committed with the authentic clock mark, so it carries nothing here.
@Suite struct SealedReplayAcrossCommitsTests {
  typealias Fixture = SealedStoreTests.Fixture

  func read(_ f: Fixture, _ key: String) throws -> String? {
    let opened = try f.gate().openOffline()
    guard case .opened(let reader) = opened else {
      return
        "refused \(opened.decision.reasons) \(String(describing: opened.decision.markError ?? opened.decision.cacheError))"
    }
    do {
      return try reader.item(forKey: CacheItemKey(key)).map {
        String(decoding: $0.payload, as: UTF8.self)
      }
    } catch {
      return "\((error as? OfflineReadError)?.storeError?.code.description ?? "\(error)")"
    }
  }

  @Test(arguments: ["removed", "altered", "older"])
  func anOlderItemPutBackWithoutTheCurrentIndexIsNotCarried(_ index: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["a": "OLD", "b": "B"])
    let oldItem = try f.bytes("cache/items/a")
    let oldIndex = try f.bytes("cache/index")
    f.clock.advance(by: .seconds(60))
    try f.signIn(["a": "NEW"])
    #expect(try read(f, "a") == "NEW")
    // The attacker, without the key.
    try f.write(oldItem, "cache/items/a")
    switch index {
    case "removed": try FileManager.default.removeItem(atPath: f.store + "/cache/index")
    case "altered":
      var bytes = try f.bytes("cache/index")
      bytes[40] ^= 0x01
      try f.write(bytes, "cache/index")
    default: try f.write(oldIndex, "cache/index")
    }
    #expect(try read(f, "a") != "OLD")
    // The next online sign-in does not write `a` again.
    f.clock.advance(by: .seconds(60))
    try f.signIn(["c": "C"])
    let c = try read(f, "c")
    #expect(c == "C")
    #expect(try read(f, "a") == nil, "the old copy of a must not be carried")
    #expect(try read(f, "b") == nil, "no index of the mark's generation vouched for b")
    #expect(!f.files.contains("cache/items/a"))
  }

  /// A signed-out item put back with the index removed, then a session write: the session's
  /// commit carries nothing without the index of the mark's generation.
  @Test func aSignedOutItemPutBackIsNotCarriedByASessionCommit() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["secret": "user A"])
    let saved = try f.bytes("cache/items/secret")
    f.clock.advance(by: .seconds(60))
    let session = try f.gate().beginOnlineSession(writing: [
      (try CacheItemKey("other"), Data("o".utf8))
    ])
    try session.delete(CacheItemKey("secret"))
    try f.write(saved, "cache/items/secret")
    try FileManager.default.removeItem(atPath: f.store + "/cache/index")
    try session.write(CacheItemKey("z"), Data("z".utf8))
    #expect(try read(f, "z") == "z")
    #expect(try read(f, "secret") == nil)
  }
}
