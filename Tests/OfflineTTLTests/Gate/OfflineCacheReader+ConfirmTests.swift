import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// Time spent finding and reading an item counts: a reader judges again once the item was
/// found, before any of it is handed out, so a read that was fresh at its first recheck is
/// refused when the deadline passed, or another process raised the mark past the clock, while
/// the item was being found (a slow disk, a paused process). A sign-in meanwhile still starts
/// the read over. Whole and streamed reads, both item stores.
@Suite struct OfflineCacheReaderConfirmTests {
  typealias Fixture = GateFixture

  static let cases: [(GateFixture.Backend, Bool)] = [
    (.memory, false), (.memory, true), (.directory, false), (.directory, true),
  ]

  /// Signs in one item, opens a reader over a hooked store, runs `hook` just before the item is
  /// read, and returns the read's refusal (or `nil` and the payload when it served).
  func read(
    _ backend: GateFixture.Backend, streamed: Bool, hook: @escaping (Fixture) -> Void
  ) throws -> (refusal: OfflineReadError?, payload: Data?) {
    let f = try Fixture(backend)
    defer { f.remove() }
    try f.signIn(["token": "secret"])
    let hooked = HookedCacheStore(f.cache)
    let gate = OfflineAccessGate(
      cache: hooked, marks: f.marks, policy: f.gate.policy, clock: f.clock)
    guard case .opened(let reader) = gate.openOffline() else {
      throw CacheStoreError(code: .storeUnusable, reason: "expected the cache to open")
    }
    hooked.once(at: .beforeTheItem) { hook(f) }
    do {
      if streamed {
        var bytes = Data()
        let header = try reader.read(Fixture.key("token")) { bytes.append(contentsOf: $0) }
        return (nil, header.map { _ in bytes })
      }
      return (nil, try reader.item(forKey: Fixture.key("token"))?.payload)
    } catch let error as OfflineReadError {
      return (error, nil)
    }
  }

  /// The outside tester's example: the item's file opened 6 s late, past a 3 s deadline, was
  /// served with exit 0.
  @Test(arguments: cases)
  func theDeadlinePassingWhileTheItemIsFoundRefusesTheRead(
    _ backend: GateFixture.Backend, streamed: Bool
  ) throws {
    let result = try read(backend, streamed: streamed) { f in
      f.clock.advance(by: GateFixture.week + .seconds(1))
    }
    let refusal = try #require(result.refusal, "served \(String(describing: result.payload))")
    #expect(refusal.reasons.contains(.tooOld), "\(refusal)")
    #expect(result.payload == nil)
  }

  /// Another process raised the mark an hour past the wall clock (same generation) while the
  /// item was found: the clock is behind the mark when the item would be served.
  @Test(arguments: cases)
  func aMarkRaisedPastTheClockWhileTheItemIsFoundRefusesTheRead(
    _ backend: GateFixture.Backend, streamed: Bool
  ) throws {
    let result = try read(backend, streamed: streamed) { f in
      let ahead = f.clock.now().saturatingAdvanced(by: .seconds(3_600))
      #expect((try? f.marks.observe(now: ahead)) != nil)
    }
    let refusal = try #require(result.refusal, "served \(String(describing: result.payload))")
    #expect(refusal.reasons.contains(.clockBehindMark), "\(refusal)")
    #expect(result.payload == nil)
  }

  /// Controls: time that stays within the deadline, and a mark raised below the clock, serve
  /// the item (the confirmation refuses only what a new recheck would).
  @Test(arguments: cases)
  func timeWithinTheDeadlineStillServes(_ backend: GateFixture.Backend, streamed: Bool) throws {
    let result = try read(backend, streamed: streamed) { f in
      f.clock.advance(by: .seconds(60))
      #expect((try? f.marks.observe(now: f.clock.now())) != nil)
      f.clock.advance(by: .seconds(1))
    }
    #expect(result.refusal == nil, "\(String(describing: result.refusal))")
    #expect(result.payload == Data("secret".utf8))
  }
}
