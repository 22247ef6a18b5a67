import Foundation
import OfflineTTL

/// Our side of the `peer` and `growth` comparisons: `OfflineAccessGate.checkEligibility()` over a
/// `DirectoryCacheStore` and a `FileClockMarkStore` sharing one directory, with the real clocks.
///
/// Two gates over the same stores: one with `markResolution` 0 (every check writes the advanced
/// mark durably) and one with the default resolution (1 s: a check within the resolution of the
/// stored mark reads and decides but writes nothing).
final class GateCheck {
  /// Write-type syscalls (`/proc/self/io` `syscw`) per writing check, in the last run.
  private(set) var writesPerWritingCheck = 0.0
  /// Write-type syscalls per repeated check, in the last run.
  private(set) var writesPerRepeatedCheck = 0.0

  private let writingGate: OfflineAccessGate
  private let repeatedGate: OfflineAccessGate
  private let directory: String

  /// Whether the cache was reused from an earlier run rather than written now.
  let reused: Bool

  /// Signs in online on a fresh store in `directory` and writes `items` items of 64 bytes in
  /// one session, then checks once that the cache is fresh.
  ///
  /// - Parameters:
  ///   - directory: The store directory; emptied first unless reused.
  ///   - items: The number of items.
  ///   - reuse: Keep a store left in `directory` by an earlier run when a check on it is fresh
  ///     with exactly `items` items (writing and, above all, deleting 100,000 files takes minutes
  ///     on a busy virtual disk).
  /// - Throws: ``BenchError`` when the setup fails or the first check is not fresh.
  init(directory: String, items: Int = 1, reuse: Bool = false) throws {
    self.directory = directory
    let maxAge = Duration.seconds(7 * 86_400)
    let cache = DirectoryCacheStore(atPath: directory)
    let marks = FileClockMarkStore(atPath: directory)
    writingGate = OfflineAccessGate(
      cache: cache, marks: marks,
      policy: try EligibilityPolicy(maxAge: maxAge, markResolution: .zero))
    repeatedGate = OfflineAccessGate(
      cache: cache, marks: marks, policy: try EligibilityPolicy(maxAge: maxAge))
    if reuse, FileManager.default.fileExists(atPath: directory) {
      let decision = writingGate.checkEligibility()
      if decision.isFresh, decision.items?.count == items {
        reused = true
        return
      }
    }
    reused = false
    BenchProcess.discard(URL(fileURLWithPath: directory))
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    let session = try writingGate.beginOnlineSession()
    let payload = Data(repeating: 0x5A, count: 64)
    var batch: [(CacheItemKey, Data)] = []
    batch.reserveCapacity(Swift.min(items, 10_000))
    var written = 0
    while written < items {
      batch.removeAll(keepingCapacity: true)
      let end = Swift.min(items, written + 10_000)
      for index in written..<end {
        batch.append((try CacheItemKey("item-\(index)"), payload))
      }
      try session.write(contentsOf: batch)
      written = end
    }
    session.close()
    let decision = writingGate.checkEligibility()
    guard decision.isFresh, decision.items?.count == items else {
      throw BenchError.failed(
        "first check on \(items) items: \(decision.status) [\(decision.reasons)],"
          + " \(decision.items?.count ?? -1) items")
    }
  }

  /// `count` checks with markResolution 0, each writing the mark; nanoseconds each.
  func writingChecks(_ count: Int) throws -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    let perCheck = try ProcessIO.writesPerOperation(count: count) {
      for _ in 0..<count { samples.append(try Self.timedCheck(writingGate)) }
    }
    writesPerWritingCheck = perCheck ?? .nan
    return samples
  }

  /// `count` checks with the default markResolution; nanoseconds each.
  func repeatedChecks(_ count: Int) throws -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    let perCheck = try ProcessIO.writesPerOperation(count: count) {
      for _ in 0..<count { samples.append(try Self.timedCheck(repeatedGate)) }
    }
    writesPerRepeatedCheck = perCheck ?? .nan
    return samples
  }

  /// The parts of a repeated check timed alone, `count` times each (nanoseconds): the item
  /// summary (`DirectoryCacheStore.summary()`), one boot-clock reading (`LinuxBootClock.now()`),
  /// and the mark observation within the resolution (`FileClockMarkStore.observe`, no write).
  func repeatedCheckParts(_ count: Int) throws -> (
    summary: [UInt64], bootClock: [UInt64], observe: [UInt64]
  ) {
    let cache = DirectoryCacheStore(atPath: directory)
    let marks = FileClockMarkStore(atPath: directory)
    let boot = LinuxBootClock()
    let clock = SystemWallClock()
    var summary: [UInt64] = []
    var bootClock: [UInt64] = []
    var observe: [UInt64] = []
    for _ in 0..<count {
      summary.append(try BenchClock.time { blackHole(try cache.summary()) })
      bootClock.append(BenchClock.time { blackHole(boot.now()) })
      observe.append(
        try BenchClock.time {
          blackHole(
            try marks.observe(
              ClockObservation(wall: clock.now(), boot: boot.now()), resolution: .seconds(1)))
        })
    }
    return (summary, bootClock, observe)
  }

  /// `count` timings of building the decision alone, nanoseconds each: the gate's
  /// `OfflineAccessDecision(policy:mark:items:)` (the rules and the assembly) over the mark
  /// transition and item summary of one repeated check, read once before.
  func decisionBuilds(_ count: Int) throws -> [UInt64] {
    let cache = DirectoryCacheStore(atPath: directory)
    let marks = FileClockMarkStore(atPath: directory)
    let clocks = Clocks(wall: SystemWallClock(), boot: LinuxBootClock())
    let policy = repeatedGate.policy
    let mark = MarkOutcome.observed(
      try marks.observe(resolution: policy.markResolution, readingClocks: clocks.readForDecision))
    let items = Result<ItemTimeSummary, StoreError>.success(try cache.summary())
    guard OfflineAccessDecision(policy: policy, mark: mark, items: items).isFresh else {
      throw BenchError.failed("the decision built from a repeated check's inputs is not fresh")
    }
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
      samples.append(
        BenchClock.time {
          blackHole(OfflineAccessDecision(policy: policy, mark: mark, items: items))
        })
    }
    return samples
  }

  /// One timed check, which must be fresh (a refusal would be a cheaper, wrong figure).
  private static func timedCheck(_ gate: OfflineAccessGate) throws -> UInt64 {
    let start = BenchClock.now()
    let decision = gate.checkEligibility()
    let elapsed = BenchClock.now() &- start
    guard decision.isFresh else {
      throw BenchError.failed("a check was \(decision.status) [\(decision.reasons)]")
    }
    blackHole(decision)
    return elapsed
  }
}
