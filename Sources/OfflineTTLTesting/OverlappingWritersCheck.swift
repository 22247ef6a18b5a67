import Foundation
import OfflineTTL
import Synchronization
import Testing

/// Checks that online writers that overlap stamp their items after the writers they waited for:
/// sign-ins (`OfflineAccessGate.beginOnlineSession(writing:)`) and one session's writes
/// (`OnlineSession.write(contentsOf:)`) run at once from many threads, on a wall clock that
/// rises at every reading, against the stores you pass. Failures are recorded with Swift
/// Testing's `#expect`.
///
/// A writer that read its stamp before it took the store's writer lock, and then waited there
/// for another sign-in, committed items stamped earlier than the mark that sign-in had reset:
/// its own sign-in then looked older than it was, and offline reads were refused (`too_old`,
/// `deadline_passed`) right after a sign-in.
///
/// ```swift
/// @Test func overlappingSignInsStampUnderTheLock() throws {
///   try OverlappingWritersCheck.signIns(
///     threads: 8, cache: InMemoryCacheStore(), marks: InMemoryClockMarkStore())
/// }
/// ```
public enum OverlappingWritersCheck {
  /// Where the rising clock starts: 2023-11-14T22:13:20Z.
  public static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  /// A wall clock that moves forward by one second at every reading, so that readings taken
  /// one after the other are strictly ordered, whichever threads take them.
  public final class RisingWallClock: WallClock {
    private let next: Mutex<WallClockInstant>

    /// Creates a clock whose first reading is `start`.
    public init(_ start: WallClockInstant = OverlappingWritersCheck.start) {
      next = Mutex(start)
    }

    /// The next second.
    public func now() -> WallClockInstant {
      next.withLock { next in
        defer { next = next.saturatingAdvanced(by: .seconds(1)) }
        return next
      }
    }
  }

  /// The gate the checks use: the rising clock, no boot clock or TPM, a max age of 5 s (five
  /// readings: a sign-in, a check, an open and a read take four) and no mark resolution, so that
  /// an item stamped before the sign-ins it waited for is refused as `too_old`.
  static func gate(cache: any CacheItemStore, marks: any ClockMarkStore) throws
    -> OfflineAccessGate
  {
    OfflineAccessGate(
      cache: cache, marks: marks,
      policy: try EligibilityPolicy(
        maxAge: .seconds(5), usesBootClockFloor: false, markResolution: .zero),
      clocks: Clocks(wall: RisingWallClock(), boot: nil, machine: nil))
  }

  /// Runs `threads` sign-ins at once, each writing the keys `token` and `profile` (its own
  /// bytes), then checks: every sign-in committed in a generation of its own; its items'
  /// `writtenAt` is no later than its own mark and no earlier than the mark of every sign-in of
  /// a lower generation (the ones it waited for); the stored `token` is the last generation's,
  /// with its stamp; and a check and a read right after the last sign-in are fresh.
  ///
  /// - Parameters:
  ///   - threads: How many sign-ins overlap (at least 2).
  ///   - cache: An empty item store.
  ///   - marks: An empty mark store of the same cache.
  /// - Throws: A store error of the final check or read.
  public static func signIns(
    threads: Int, cache: any CacheItemStore, marks: any ClockMarkStore
  ) throws {
    let gate = try gate(cache: cache, marks: marks)
    let token = try CacheItemKey("token")
    let profile = try CacheItemKey("profile")
    let sessions = Mutex<[(thread: Int, session: OnlineSession)]>([])
    let failures = Mutex<[String]>([])
    runConcurrently(threads) { thread in
      do {
        let session = try gate.beginOnlineSession(writing: [
          (token, Data("sign-in \(thread)".utf8)),
          (profile, Data([UInt8(truncatingIfNeeded: thread)])),
        ])
        sessions.withLock { $0.append((thread, session)) }
      } catch {
        failures.withLock { $0.append("sign-in \(thread): \(error)") }
      }
    }
    #expect(failures.withLock { $0 }.isEmpty, "no sign-in fails for losing a race")
    let done = sessions.withLock { $0 }.sorted { $0.session.generation < $1.session.generation }
    #expect(Set(done.map(\.session.generation)).count == done.count, "one generation each")
    var stampedEarly: [String] = []
    for (index, entry) in done.enumerated() {
      guard let stamp = entry.session.signInWrittenAt else {
        Issue.record("sign-in \(entry.thread) reports no writtenAt")
        continue
      }
      #expect(stamp <= entry.session.record.mark, "items never stamped after their own mark")
      if let waitedFor = done[..<index].last(where: { stamp < $0.session.record.mark }) {
        stampedEarly.append(
          "generation \(entry.session.generation) stamped \(stamp), before the mark "
            + "\(waitedFor.session.record.mark) of generation \(waitedFor.session.generation)")
      }
    }
    #expect(stampedEarly.isEmpty, "stamped before a sign-in it waited for: \(stampedEarly)")
    guard let last = done.last else { return }
    let stored = try cache.item(forKey: token)
    #expect(stored?.writtenAt == last.session.signInWrittenAt, "the last generation's stamp")
    #expect(stored?.payload == Data("sign-in \(last.thread)".utf8), "the last sign-in's token")
    let decision = gate.checkEligibility()
    #expect(decision.status == .fresh, "right after the last sign-in: \(decision.reasons)")
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("the cache did not open right after the last sign-in")
      return
    }
    let read = try reader.item(forKey: token)
    #expect(read?.payload == Data("sign-in \(last.thread)".utf8))
  }

  /// Signs in once, then runs `threads` writes of that session at once, each writing the key
  /// `shared` (its own bytes), then checks that the stored `shared` is the write with the latest
  /// stamp (the last commit carries the latest stamp: each write is stamped after the writes it
  /// waited for), and that a check right after is fresh.
  ///
  /// - Parameters:
  ///   - threads: How many writes overlap (at least 2).
  ///   - cache: An empty item store.
  ///   - marks: An empty mark store of the same cache.
  /// - Throws: A store error of the sign-in or the final read.
  public static func sessionWrites(
    threads: Int, cache: any CacheItemStore, marks: any ClockMarkStore
  ) throws {
    let gate = try gate(cache: cache, marks: marks)
    let shared: CacheItemKey = "shared"
    let session = try gate.beginOnlineSession()
    let stamps = Mutex<[(thread: Int, stamp: WallClockInstant)]>([])
    let failures = Mutex<[String]>([])
    runConcurrently(threads) { thread in
      do {
        let stamp = try session.write(shared, Data("write \(thread)".utf8))
        stamps.withLock { $0.append((thread, stamp)) }
      } catch {
        failures.withLock { $0.append("write \(thread): \(error)") }
      }
    }
    #expect(failures.withLock { $0 }.isEmpty, "every write of the current session commits")
    let latest = stamps.withLock { $0 }.max { $0.stamp < $1.stamp }
    guard let latest else { return }
    let stored = try cache.item(forKey: shared)
    let storedStamp = stored.map { "\($0.writtenAt)" } ?? "nothing"
    #expect(
      stored?.writtenAt == latest.stamp,
      "the last commit carries the latest stamp (stored \(storedStamp), latest \(latest.stamp))")
    #expect(stored?.payload == Data("write \(latest.thread)".utf8))
    let decision = gate.checkEligibility()
    #expect(decision.status == .fresh, "right after the last write: \(decision.reasons)")
  }
}
