import Dispatch
import Foundation
import OfflineTTL

/// `async`: what the async variants cost beyond the blocking call they wrap. One
/// `checkEligibilityAsync()` awaited from a task beside one `checkEligibility()` on the same
/// store (a mark rise below the resolution, so neither writes): the difference is the hop to the
/// dedicated queue and back.
enum AsyncHopBenchmark {
  static let help = """
    usage: offline-ttl-bench async [--json] [--quick]

    checkEligibilityAsync() awaited from a task beside checkEligibility() on the same file
    store (1 item, no mark write); the difference per call is the async hop (target: at most
    50 µs a call, and at most 2x the blocking call).
      --quick    fewer iterations (a smoke test; figures are noisier)
    """

  static func run(arguments: [String], json: Bool) throws {
    guard let options = try BenchArguments.parse(arguments, help: help) else { return }
    let quick = options.flag("quick")
    let report = BenchReport(section: "async", json: json)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "offline-ttl-bench-async-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: directory) }
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: directory.path),
      marks: FileClockMarkStore(atPath: directory.path),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), markResolution: .seconds(3_600)))
    try gate.beginOnlineSession().write("token", Data("secret".utf8))
    guard gate.checkEligibility().isFresh else { throw BenchError.failed("not fresh") }

    report.heading("checkEligibilityAsync() awaited vs the blocking checkEligibility()")
    let calls = quick ? 200 : 2_000
    let runs = quick ? 3 : 7
    let pair = BenchClock.paired(runs) {
      awaitFromTask {
        for _ in 0..<calls { blackHole(await gate.checkEligibilityAsync()) }
      }
    } floor: {
      for _ in 0..<calls { blackHole(gate.checkEligibility()) }
    }
    let asyncPerCall = BenchStats.median(pair.measured) / Double(calls)
    let syncPerCall = BenchStats.median(pair.floor) / Double(calls)
    report.record(
      "checkEligibilityAsync()", asyncPerCall / 1_000, unit: "µs",
      floor: ("checkEligibility()", syncPerCall / 1_000), target: .ratioAtMost(2.0))
    report.record(
      "async hop (difference per call)", (asyncPerCall - syncPerCall) / 1_000, unit: "µs",
      target: .valueAtMost(50))
  }

  /// Runs `body` in a task and blocks this (main, non-pool) thread until it ends.
  private static func awaitFromTask(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
      await body()
      done.signal()
    }
    done.wait()
  }
}
