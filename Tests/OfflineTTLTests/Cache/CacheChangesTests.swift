import Foundation
import OfflineTTL
import Testing

@Suite struct CacheChangesTests {
  @Test func laterChangeToAKeyReplacesTheEarlierOne() throws {
    let key = CacheItemKey("k")
    var changes = CacheChanges()
    #expect(changes.isEmpty)
    changes.write(key, Data("a".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 1))
    changes.delete(key)
    #expect(changes.entries.count == 1)
    #expect(changes.entries[key] == .some(nil))
    changes.write(key, Data("b".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 2))
    #expect(changes.entries[key]??.payload == Data("b".utf8))
  }

  @Test func removeAllDropsEarlierEntriesAndKeepsLaterOnes() throws {
    var changes = CacheChanges()
    changes.write(CacheItemKey("a"), Data(), writtenAt: .min)
    changes.removeAll()
    #expect(changes.removesAll)
    #expect(changes.entries.isEmpty)
    #expect(!changes.isEmpty)
    changes.write(CacheItemKey("b"), Data(), writtenAt: .max)
    #expect(changes.entries.keys.map(\.rawValue) == ["b"])
  }
}
