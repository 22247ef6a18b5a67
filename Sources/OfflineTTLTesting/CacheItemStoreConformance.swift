import Foundation
import OfflineTTL
import Synchronization
import Testing

/// The shared conformance suite every `CacheItemStore` must pass (the requirements listed on
/// the protocol). Call ``check(_:)`` from a `@Test`, with a factory that returns a fresh, empty
/// store each time; failures are recorded with Swift Testing's `#expect`.
///
/// ```swift
/// @Test func conforms() throws {
///   try CacheItemStoreConformance.check { InMemoryCacheStore() }
/// }
/// ```
public enum CacheItemStoreConformance {
  /// Runs every check, each on a fresh store.
  ///
  /// - Parameter makeStore: Returns a new, empty store.
  /// - Throws: The first unexpected store error.
  public static func check(_ makeStore: () throws -> any CacheItemStore) throws {
    try emptyStore(makeStore())
    try exactTimesAndBytes(makeStore())
    try replaceAndDeleteRecomputeTheSummary(makeStore())
    try removeAllThenWrite(makeStore())
    try refusedPreconditionWritesNothing(makeStore())
    try manyItemsInOneCommit(makeStore())
    try keysThatLookLikeStoreFilesDoNotClash(makeStore())
    try readsChangeNothing(makeStore())
    try concurrentCommitsAreSerialized(makeStore())
    try writerLockExcludesCommitsAndItself(makeStore())
    try changesArePreparedUnderTheExclusion(makeStore())
    try aSignInPreparesBetweenItsGenerationAndItsCommitPoint(makeStore())
    try aSignInWhoseGenerationCannotBeReadEndsThere(makeStore())
  }

  static func t(_ nanoseconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
  }

  static func key(_ text: String) throws -> CacheItemKey { try CacheItemKey(text) }

  static func emptyStore(_ store: any CacheItemStore) throws {
    #expect(try store.summary() == .empty)
    #expect(try store.keys().isEmpty)
    #expect(try store.item(forKey: key("missing")) == nil)
    var precondition = 0
    #expect(
      try store.commit(
        CacheChanges(),
        onlyIf: {
          precondition += 1; return true
        }))
    #expect(precondition == 1, "the precondition runs exactly once, even for no changes")
    #expect(try store.summary() == .empty)
  }

  static func exactTimesAndBytes(_ store: any CacheItemStore) throws {
    var changes = CacheChanges()
    let times: [(String, Int64, [UInt8])] = [
      ("a", 1_700_000_000_123_456_789, Array("alpha".utf8)),
      ("b", .min, []),
      ("c", .max, [0, 1, 2, 255, 0]),
      ("d", -1, Array(repeating: 7, count: 200_000)),
    ]
    for (name, nanoseconds, bytes) in times {
      changes.write(try key(name), Data(bytes), writtenAt: t(nanoseconds))
    }
    try store.commit(changes)
    for (name, nanoseconds, bytes) in times {
      let item = try #require(try store.item(forKey: key(name)))
      #expect(item.writtenAt == t(nanoseconds), "writtenAt is exact to the nanosecond")
      #expect(item.payload == Data(bytes))
      #expect(item.key == (try key(name)))
    }
    let summary = try store.summary()
    #expect(summary.count == 4)
    #expect(summary.oldest == .min)
    #expect(summary.newest == .max)
    #expect(try store.keys() == ["a", "b", "c", "d"].map { try key($0) })
  }

  static func replaceAndDeleteRecomputeTheSummary(_ store: any CacheItemStore) throws {
    var first = CacheChanges()
    first.write(try key("old"), Data("1".utf8), writtenAt: t(100))
    first.write(try key("mid"), Data("2".utf8), writtenAt: t(200))
    first.write(try key("new"), Data("3".utf8), writtenAt: t(300))
    try store.commit(first)
    var replace = CacheChanges()
    replace.write(try key("old"), Data("1b".utf8), writtenAt: t(400))
    try store.commit(replace)
    var summary = try store.summary()
    #expect(summary.count == 3)
    #expect(summary.oldest == t(200), "replacing the oldest item moves the oldest bound")
    #expect(summary.newest == t(400))
    #expect(try store.item(forKey: key("old"))?.payload == Data("1b".utf8))
    var delete = CacheChanges()
    delete.delete(try key("old"))
    delete.delete(try key("never-written"))
    try store.commit(delete)
    summary = try store.summary()
    #expect(summary.count == 2)
    #expect(summary.newest == t(300), "deleting the newest item moves the newest bound")
    #expect(try store.item(forKey: key("old")) == nil)
  }

  static func removeAllThenWrite(_ store: any CacheItemStore) throws {
    var first = CacheChanges()
    first.write(try key("x"), Data("x".utf8), writtenAt: t(1))
    first.write(try key("y"), Data("y".utf8), writtenAt: t(2))
    try store.commit(first)
    var signOut = CacheChanges()
    signOut.removeAll()
    try store.commit(signOut)
    #expect(try store.summary() == .empty)
    #expect(try store.keys().isEmpty)
    var both = CacheChanges()
    both.write(try key("x"), Data("x".utf8), writtenAt: t(5))
    both.removeAll()
    both.write(try key("z"), Data("z".utf8), writtenAt: t(9))
    try store.commit(both)
    #expect(try store.keys() == [try key("z")], "removeAll applies first, later writes stay")
    #expect(try store.summary().oldest == t(9))
  }

  static func refusedPreconditionWritesNothing(_ store: any CacheItemStore) throws {
    var changes = CacheChanges()
    changes.write(try key("a"), Data("a".utf8), writtenAt: t(1))
    #expect(try store.commit(changes, onlyIf: { false }) == false)
    #expect(try store.summary() == .empty)
    #expect(try store.item(forKey: key("a")) == nil)
  }

  static func manyItemsInOneCommit(_ store: any CacheItemStore) throws {
    var changes = CacheChanges()
    for index in 0..<300 {
      changes.write(
        try key("item-\(index)"), Data("payload \(index)".utf8), writtenAt: t(Int64(1000 + index)))
    }
    try store.commit(changes)
    let summary = try store.summary()
    #expect(summary.count == 300)
    #expect(summary.oldest == t(1000))
    #expect(summary.newest == t(1299))
    let keys = try store.keys()
    #expect(keys.count == 300)
    #expect(keys == keys.sorted())
    #expect(try store.item(forKey: key("item-123"))?.payload == Data("payload 123".utf8))
  }

  static func keysThatLookLikeStoreFilesDoNotClash(_ store: any CacheItemStore) throws {
    let names = [
      "index", "lock", "pending", "tmp", "items", "cache", "clock-mark", "clock-mark.lock",
      ".hidden", "..a", "a.", "ключ 🔑", String(repeating: "k", count: 255),
    ]
    var changes = CacheChanges()
    for (offset, name) in names.enumerated() {
      changes.write(try key(name), Data(name.utf8), writtenAt: t(Int64(offset)))
    }
    try store.commit(changes)
    #expect(try store.summary().count == names.count)
    for name in names {
      #expect(try store.item(forKey: key(name))?.payload == Data(name.utf8), "key \(name)")
    }
    // A second commit still sees every item (the store's own files were not overwritten).
    var more = CacheChanges()
    more.write(try key("after"), Data(), writtenAt: t(1000))
    try store.commit(more)
    #expect(try store.summary().count == names.count + 1)
    #expect(try store.summary().oldest == t(0))
  }

  static func readsChangeNothing(_ store: any CacheItemStore) throws {
    var changes = CacheChanges()
    changes.write(try key("a"), Data("a".utf8), writtenAt: t(42))
    try store.commit(changes)
    let before = try store.item(forKey: key("a"))
    for _ in 0..<5 {
      _ = try store.summary()
      _ = try store.keys()
      _ = try store.item(forKey: key("a"))
    }
    #expect(try store.item(forKey: key("a")) == before)
    #expect(try store.summary().count == 1)
  }

  static func concurrentCommitsAreSerialized(_ store: any CacheItemStore) throws {
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    runConcurrently(8) { worker in
      for round in 0..<5 {
        var changes = CacheChanges()
        let name = "w\(worker)-r\(round)"
        changes.write(
          try! CacheItemKey(name), Data(name.utf8), writtenAt: t(Int64(worker * 10 + round)))
        _ = try? store.commit(changes) {
          if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
            overlaps.add(1, ordering: .relaxed)
          }
          inside.subtract(1, ordering: .sequentiallyConsistent)
          return true
        }
      }
    }
    #expect(overlaps.load(ordering: .relaxed) == 0, "preconditions never overlap")
    #expect(try store.summary().count == 40)
  }

  /// `withWriterLock` and the commits' preconditions never overlap (4 threads lock, 4 commit),
  /// the lock writes nothing, and its body's result is returned.
  static func writerLockExcludesCommitsAndItself(_ store: any CacheItemStore) throws {
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let bodies = Atomic<Int>(0)
    @Sendable func enter() {
      if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
        overlaps.add(1, ordering: .relaxed)
      }
      usleep(200)
      inside.subtract(1, ordering: .sequentiallyConsistent)
    }
    runConcurrently(8) { worker in
      for round in 0..<5 {
        if worker % 2 == 0 {
          let returned = try? store.withWriterLock { () -> Int in
            enter()
            bodies.add(1, ordering: .relaxed)
            return worker * 10 + round
          }
          if returned != worker * 10 + round { overlaps.add(1000, ordering: .relaxed) }
        } else {
          var changes = CacheChanges()
          let name = "w\(worker)-r\(round)"
          changes.write(
            try! CacheItemKey(name), Data(name.utf8), writtenAt: t(Int64(worker * 10 + round)))
          _ = try? store.commit(changes) {
            enter()
            return true
          }
        }
      }
    }
    #expect(overlaps.load(ordering: .relaxed) == 0, "the writer lock excludes commits and itself")
    #expect(bodies.load(ordering: .relaxed) == 20, "every locked body ran once")
    #expect(try store.summary().count == 20, "the writer lock wrote nothing")
  }
  /// `commit(preparing:)` calls `prepare` once per commit, under the exclusion (8 threads, 5
  /// commits each, never overlapping), and applies exactly what it returned, in that order:
  /// the key every commit writes holds the last stamp prepared; a `nil` writes nothing.
  static func changesArePreparedUnderTheExclusion(_ store: any CacheItemStore) throws {
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let prepared = Mutex<Int64>(0)
    let shared = try key("shared")
    runConcurrently(8) { worker in
      for round in 0..<5 {
        _ = try? store.commit(preparing: { () -> CacheChanges? in
          if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
            overlaps.add(1, ordering: .relaxed)
          }
          defer { inside.subtract(1, ordering: .sequentiallyConsistent) }
          let stamp = prepared.withLock { count in
            count += 1
            return count
          }
          var changes = CacheChanges()
          changes.write(shared, Data("w\(worker)-r\(round)".utf8), writtenAt: t(stamp))
          return changes
        })
      }
    }
    #expect(overlaps.load(ordering: .relaxed) == 0, "prepare runs under the exclusion")
    #expect(prepared.withLock { $0 } == 40, "prepare runs once per commit")
    #expect(
      try store.item(forKey: shared)?.writtenAt == t(40), "the last prepared is the last applied")
    var calls = 0
    let refused = try store.commit(preparing: { () -> CacheChanges? in
      calls += 1
      return nil
    })
    #expect(!refused && calls == 1)
    #expect(try store.summary().count == 1, "a refused commit wrote nothing")
  }

  /// `commitSignIn(preparing:storedGeneration:commitPoint:)` reads the generation, then prepares
  /// the changes, then runs the commit point, each once and under the exclusion, and applies
  /// what was prepared.
  static func aSignInPreparesBetweenItsGenerationAndItsCommitPoint(_ store: any CacheItemStore)
    throws
  {
    var steps: [String] = []
    let token = try key("token")
    let committed = try store.commitSignIn(
      preparing: {
        steps.append("prepare")
        var changes = CacheChanges()
        changes.write(token, Data("signed in".utf8), writtenAt: t(7))
        return changes
      },
      storedGeneration: {
        steps.append("generation")
        return nil
      },
      commitPoint: {
        steps.append("commit point")
        return true
      })
    #expect(committed)
    #expect(steps == ["generation", "prepare", "commit point"])
    #expect(try store.item(forKey: token)?.writtenAt == t(7))
  }

  /// A sign-in whose stored generation could not be read (its closure throws, as
  /// `ClockMarkStore.generationForSignIn()` does for a mark lock held past its limit) ends
  /// there with that error: nothing prepared, no commit point, the committed items unchanged.
  static func aSignInWhoseGenerationCannotBeReadEndsThere(_ store: any CacheItemStore) throws {
    let token = try key("token")
    var before = CacheChanges()
    before.write(token, Data("committed".utf8), writtenAt: t(3))
    try store.commit(before)
    var steps: [String] = []
    let held = StoreError(code: .lockTimedOut, message: "the mark lock stayed held")
    let result = Result { () throws(StoreError) -> Bool in
      try store.commitSignIn(
        preparing: {
          steps.append("prepare")
          var changes = CacheChanges()
          changes.write(token, Data("signed in".utf8), writtenAt: t(7))
          return changes
        },
        storedGeneration: { () throws(StoreError) -> UInt64? in
          steps.append("generation")
          throw held
        },
        commitPoint: {
          steps.append("commit point")
          return true
        })
    }
    #expect(result.failureCode == .lockTimedOut, "\(result)")
    #expect(steps == ["generation"])
    #expect(try store.item(forKey: token)?.payload == Data("committed".utf8))
    #expect(try store.summary().count == 1)
  }
}

extension Result where Failure == StoreError {
  /// The failure's code, or `nil` on success.
  fileprivate var failureCode: StoreError.Code? {
    if case .failure(let error) = self { return error.code }
    return nil
  }
}
