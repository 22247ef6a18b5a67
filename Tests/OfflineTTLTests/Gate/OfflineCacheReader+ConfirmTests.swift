import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @testable import OfflineTTL

/// Time spent finding and reading an item counts: a reader judges again once the item was
/// found, before any of it is handed out, so a read that was fresh at its first recheck is
/// refused when the deadline passed, or another process raised the mark past the clock, while
/// the item was being found or read (a slow disk, a paused process, the checksum pass over a
/// gigabyte). A sign-in meanwhile still starts the read over. Whole and streamed reads, both item
/// stores, each at every point where time can pass before the first byte is handed out.
@Suite struct OfflineCacheReaderConfirmTests {
  typealias Fixture = GateFixture

  /// Where the time passes: before the item is opened; a whole read once the item was read,
  /// before it is returned; a streamed read once the header was accepted, before the checksum
  /// pass (the outside tester's 200 MB item, its checksum pass slowed by 6 s, was served).
  static let cases: [(GateFixture.Backend, Read)] = GateFixture.Backend.allCases.flatMap {
    backend in
    [
      (backend, Read(streamed: false, at: .beforeTheItem)),
      (backend, Read(streamed: false, at: .afterTheItem)),
      (backend, Read(streamed: true, at: .beforeTheItem)),
      (backend, Read(streamed: true, at: .afterTheHeader)),
    ]
  }

  /// A whole or streamed read, with the point where its hook runs.
  struct Read: CustomStringConvertible, Sendable {
    let streamed: Bool
    let at: HookedCacheStore.Point
    var description: String { "\(streamed ? "streamed" : "whole"), \(at)" }
  }

  /// Signs in one item, opens a reader over a hooked store, runs `hook` at `how.at`, and returns
  /// the read's refusal (or `nil` and the payload when it served).
  func read(
    _ backend: GateFixture.Backend, _ how: Read, hook: @escaping (Fixture) -> Void
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
    var ran = false
    hooked.once(at: how.at) {
      ran = true
      hook(f)
    }
    defer { #expect(ran, "the hook at \(how.at) ran") }
    do {
      if how.streamed {
        var bytes = Data()
        let header = try reader.read(Fixture.key("token")) {
          // Nothing may be handed out before the hook's time has been judged.
          #expect(ran, "a chunk was handed out before the hook ran")
          bytes.append(contentsOf: $0)
        }
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
    _ backend: GateFixture.Backend, _ how: Read
  ) throws {
    let result = try read(backend, how) { f in
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
    _ backend: GateFixture.Backend, _ how: Read
  ) throws {
    let result = try read(backend, how) { f in
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
  func timeWithinTheDeadlineStillServes(_ backend: GateFixture.Backend, _ how: Read) throws {
    let result = try read(backend, how) { f in
      f.clock.advance(by: .seconds(60))
      #expect((try? f.marks.observe(now: f.clock.now())) != nil)
      f.clock.advance(by: .seconds(1))
    }
    #expect(result.refusal == nil, "\(String(describing: result.refusal))")
    #expect(result.payload == Data("secret".utf8))
  }
}
