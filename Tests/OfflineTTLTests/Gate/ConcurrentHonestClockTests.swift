import Dispatch
import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// Honest clocks never produce a rollback: many threads, a wall clock that only moves forward,
/// every mark rise written (`markResolution` zero), readers, checkers and online sign-ins mixed.
/// A `clock_behind_mark` here is a false alarm: a clock reading compared with a mark that
/// another thread wrote after the reading was taken.
@Suite struct ConcurrentHonestClockTests {
  /// A wall clock shared by every thread that moves forward by one microsecond at each reading,
  /// so any two readings are ordered and none repeats.
  final class ForwardClock: WallClock {
    private let nanoseconds = Atomic<Int64>(1_700_000_000_000_000_000)
    func now() -> WallClockInstant {
      WallClockInstant(
        nanosecondsSinceEpoch: nanoseconds.add(1_000, ordering: .sequentiallyConsistent).newValue)
    }
  }

  /// A boot clock that moves forward with the wall clock's readings (one boot).
  final class ForwardBootClock: BootClock {
    private let nanoseconds = Atomic<Int64>(60_000_000_000)
    func now() -> BootClockReading? {
      BootClockReading(
        bootID: BootID(high: 7, low: 7),
        sinceBoot: .nanoseconds(nanoseconds.add(1_000, ordering: .sequentiallyConsistent).newValue))
    }
  }

  /// What the threads saw.
  struct Counts: Sendable, CustomStringConvertible {
    var reads = 0
    var checks = 0
    var signIns = 0
    var falseRollbacks = 0
    /// Reads refused with "try again" after every attempt met a newer sign-in: the documented
    /// bound on restarts (`OfflineCacheReader.maximumAttempts`), not a judgment of the clock.
    var retryLimits = 0
    var otherRefusals: [String] = []
    var description: String {
      "\(falseRollbacks) clock_behind_mark in \(reads) reads, \(checks) checks, \(signIns) sign-ins"
        + " (\(retryLimits) reads met a newer sign-in at every attempt)"
    }
  }

  enum Backend: String, CaseIterable, CustomStringConvertible {
    case memory, files
    var description: String { rawValue }
  }

  @Test(arguments: Backend.allCases, [false, true])
  func honestClocksAreNeverRefusedAsARollback(_ backend: Backend, floor: Bool) throws {
    let directory = try TemporaryStoreDirectory(prefix: "honest")
    defer { directory.remove() }
    let cache: any CacheItemStore
    let marks: any ClockMarkStore
    switch backend {
    case .memory:
      cache = InMemoryCacheStore()
      marks = InMemoryClockMarkStore()
    case .files:
      cache = DirectoryCacheStore(atPath: directory.path)
      marks = FileClockMarkStore(atPath: directory.path)
    }
    let policy = try EligibilityPolicy(
      maxAge: .seconds(86_400), usesBootClockFloor: floor, markResolution: .zero)
    let gate = OfflineAccessGate(
      cache: cache, marks: marks, policy: policy, clock: ForwardClock(),
      bootClock: ForwardBootClock())
    let key = CacheItemKey("token")
    try gate.beginOnlineSession().write(key, Data("secret".utf8))

    let threads = 6
    let rounds = backend == .memory ? 400 : 60
    let counts = Mutex(Counts())
    DispatchQueue.concurrentPerform(iterations: threads) { index in
      var local = Counts()
      for round in 0..<rounds {
        if index == 0 {
          // The signer: a sign-in resets the mark (below what others saw is allowed).
          if let session = try? gate.beginOnlineSession() {
            _ = try? session.write(key, Data("secret \(round)".utf8))
            local.signIns += 1
          }
        } else if index == 1 {
          // A checker, like `status`.
          let decision = gate.checkEligibility()
          local.checks += 1
          Self.tally(decision, into: &local)
        } else {
          // Readers, like `read`: open, then read twice (each read rechecks).
          switch gate.openOffline() {
          case .refused(let decision):
            local.checks += 1
            Self.tally(decision, into: &local)
          case .opened(let reader):
            local.checks += 1
            for _ in 0..<2 {
              local.reads += 1
              do throws(OfflineReadError) {
                _ = try reader.item(forKey: key)
              } catch {
                if error.code == .clockBehindMark {
                  local.falseRollbacks += 1
                } else if error.reasons == .itemUnreadable,
                  error.storeError?.code == .storeUnusable,
                  error.description.contains("kept replacing the item set")
                {
                  local.retryLimits += 1
                } else {
                  local.otherRefusals.append(error.description)
                }
              }
            }
          }
        }
      }
      counts.withLock {
        $0.reads += local.reads
        $0.checks += local.checks
        $0.signIns += local.signIns
        $0.falseRollbacks += local.falseRollbacks
        $0.retryLimits += local.retryLimits
        $0.otherRefusals += local.otherRefusals
      }
    }
    let seen = counts.withLock { $0 }
    print("honest clocks, \(backend), floor \(floor ? "on" : "off"): \(seen)")
    #expect(seen.falseRollbacks == 0, "\(seen)")
    #expect(seen.otherRefusals.isEmpty, "\(seen.otherRefusals.prefix(5))")
    #expect(seen.reads > seen.retryLimits)
  }

  static func tally(_ decision: OfflineAccessDecision, into counts: inout Counts) {
    guard decision.status != .fresh else { return }
    if decision.reasons.contains(.clockBehindMark) {
      counts.falseRollbacks += 1
    } else {
      counts.otherRefusals.append("\(decision.status) \(decision.reasons)")
    }
  }
}
