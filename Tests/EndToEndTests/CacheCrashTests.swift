import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An online sign-in that rewrites 1,000 items (`offline-ttl sign-in --put ...`) is killed with
/// SIGKILL at a random moment inside its run, a few times; after each kill every item must read
/// back whole (old bytes or new, never half), the summary must count every item, and the cache
/// must still be judged (no `item_unreadable`). The items are written in one commit, so a kill
/// can leave some items old and some new: each item is atomic, the commit across items is not.
@Suite struct CacheCrashTests {
  static let items = 1_000
  static let kills = 4

  @Test func sigkillDuringACommitLeavesEveryItemOldOrNew() throws {
    let dir = try TemporaryStoreDirectory(prefix: "cache-crash")
    defer { dir.remove() }
    let store = dir.appending("store")
    let versions = (0...Self.kills).map { version in
      let path = dir.appending("payload-\(version)")
      _ = FileManager.default.createFile(
        atPath: path, contents: Data("version \(version) ".utf8 + Data(repeating: 0x41, count: 200))
      )
      return path
    }
    func signIn(_ version: Int) -> [String] {
      ["sign-in", "--store", store]
        + (0..<Self.items).flatMap { ["--put", "item-\($0)=\(versions[version])"] }
    }
    // A full run first, timed, so the kills can land inside one.
    let binary = try BinaryRunner()
    let began = Date()
    let first = try binary.start(signIn(0))
    #expect(first.waitForExit().exitCode == 0)
    let full = Date().timeIntervalSince(began)
    var random = SystemRandomNumberGenerator()
    var killedMidRun = 0
    var midCommit = 0
    for version in 1...Self.kills {
      let child = try binary.start(signIn(version))
      usleep(UInt32(full * Double.random(in: 0.2...0.9, using: &random) * 1_000_000))
      child.kill()
      if child.waitForExit().exitCode == nil { killedMidRun += 1 }
      if FileManager.default.fileExists(atPath: store + "/cache/pending") { midCommit += 1 }
      let cache = DirectoryCacheStore(atPath: store)
      let summary = try cache.summary()
      #expect(summary.count == Self.items, "kill \(version): every item is still there")
      for index in stride(from: 0, to: Self.items, by: 37) {
        let item = try #require(try cache.item(forKey: CacheItemKey("item-\(index)")))
        let text = String(decoding: item.payload.prefix(while: { $0 != 0x41 }), as: UTF8.self)
        #expect(
          text == "version \(version) " || (0..<version).contains { text == "version \($0) " },
          "kill \(version), item \(index): \(text)")
        #expect(item.payload.count == text.utf8.count + 200)
      }
    }
    print(
      "cache crash test: \(killedMidRun) of \(Self.kills) kills landed mid-run,"
        + " \(midCommit) inside a commit (pending marker left)")
  }
}
