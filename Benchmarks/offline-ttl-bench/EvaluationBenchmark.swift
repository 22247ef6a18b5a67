import Foundation
import OfflineTTL
import OfflineTTLTestDoubles

/// `evaluate`: the pure policy (``EligibilityPolicy/evaluate(writtenAt:now:mark:)``) against its
/// floor, a plain loop computing the min and max of the same `[WallClockInstant]` array, and the
/// peak memory of a process evaluating 1,000,000 items.
enum EvaluationBenchmark {
  static let help = """
    usage: offline-ttl-bench evaluate [--json] [--quick] [--sizes N,N,...] [--no-memory]

    Pure evaluation for n = 1, 10, 1,000 and 1,000,000 items: nanoseconds per evaluation and per
    item beside a plain min/max loop over the same array (targets: ratio <= 1.5 at 1,000,000;
    >= 20,000,000 evaluations/s at n = 1), then the peak memory (VmHWM) of a child process that
    evaluates 1,000,000 items, beside its baseline + 1.2 x 8n bytes.
      --quick        fewer iterations (a smoke test; figures are noisier)
      --sizes LIST   item counts to measure, comma-separated (default 1,10,1000,1000000)
      --no-memory    skip the peak-memory child process
    """

  static let sizes = [1, 10, 1_000, 1_000_000]

  static func run(arguments: [String], json: Bool) throws {
    guard
      let options = try BenchArguments.parse(
        arguments, help: help, flags: ["no-memory"], options: ["sizes"])
    else { return }
    let quick = options.flag("quick")
    let report = BenchReport(section: "evaluate", json: json)
    let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400))
    report.heading("pure evaluation vs a plain min/max loop over the same array")
    var chosen = sizes
    if let list = options.value("sizes") {
      chosen = try list.split(separator: ",").map { (text: Substring) throws(BenchError) -> Int in
        guard let n = Int(text.replacingOccurrences(of: "_", with: "")), n > 0 else {
          throw .usage("--sizes needs positive integers, got '\(text)'")
        }
        return n
      }
    }
    for n in chosen {
      let cost = measure(n: n, policy: policy, quick: quick)
      let floorName = "min/max loop"
      report.record(
        "n=\(BenchFormat.grouped(Int64(n))) per evaluation", cost.ours, unit: "ns",
        floor: (floorName, cost.floor), target: n == 1_000_000 ? .ratioAtMost(1.5) : nil)
      if n > 1 {
        report.record(
          "n=\(BenchFormat.grouped(Int64(n))) per item", cost.ours / Double(n), unit: "ns/item",
          floor: (floorName, cost.floor / Double(n)))
      } else {
        report.record(
          "n=1 evaluations per second", 1e9 / cost.ours, unit: "evals/s",
          floor: (floorName, 1e9 / cost.floor), target: .valueAtLeast(20_000_000))
      }
    }
    if options.flag("no-memory") { return }
    report.heading("peak memory evaluating 1,000,000 items (child process, VmHWM)")
    let n = 1_000_000
    let probe = try MemoryProbe.spawn(items: n)
    let limit = Double(probe.baselineBytes) + 1.2 * 8 * Double(n)
    report.record("baseline (VmHWM before the array)", Double(probe.baselineBytes), unit: "bytes")
    report.record(
      "peak (VmHWM after evaluating)", Double(probe.peakBytes), unit: "bytes",
      floor: ("baseline + 1.2 x 8n", limit), target: .ratioAtMost(1.0),
      note: "growth \(BenchFormat.grouped(probe.peakBytes - probe.baselineBytes)) bytes for 8n ="
        + " \(BenchFormat.grouped(Int64(8 * n)))")
  }

  /// Item times for `n` items: the last 24 hours before `base`, in a fixed pseudo-random order.
  static func items(count n: Int, base: Int64) -> [WallClockInstant] {
    var random = SplitMix64(seed: 1)
    return (0..<n).map { _ in
      let offset = Int64(truncatingIfNeeded: random.next() % 86_400_000_000_000)
      return WallClockInstant(nanosecondsSinceEpoch: base - offset)
    }
  }

  /// Nanoseconds per evaluation of `n` items, ours and the floor's, each the fastest of many
  /// short runs. Each iteration passes the array through ``opaque(_:)`` and sinks its result into
  /// ``blackHole(_:)``, in both loops alike, so neither can be hoisted or deleted; `now` moves
  /// by 1 ns per iteration.
  static func measure(
    n: Int, policy: EligibilityPolicy, quick: Bool, itemsPerRun: Int? = nil, runs: Int? = nil
  ) -> (ours: Double, floor: Double) {
    let base: Int64 = 1_700_000_000_000_000_000
    let array = opaque(items(count: n, base: base))
    let mark = opaque(WallClockInstant(nanosecondsSinceEpoch: base + 1_000))
    let start = opaque(base + 2_000)
    // Many short runs (about 250,000 items each, at least one evaluation), keeping the fastest:
    // on 2 cores shared with other processes, noise only ever adds time, and a short run has a
    // chance to finish without being descheduled.
    let iterations = Swift.max(1, (itemsPerRun ?? 250_000) / n)
    let runs = runs ?? (quick ? 11 : 41)

    let samples = BenchClock.paired(runs) {
      for i in 0..<iterations {
        let now = WallClockInstant(nanosecondsSinceEpoch: start &+ Int64(i))
        blackHole(policy.evaluate(writtenAt: opaque(array), now: now, mark: mark))
      }
    } floor: {
      for i in 0..<iterations {
        let values = opaque(array)
        var low = Int64.max
        var high = Int64.min
        for value in values {
          low = Swift.min(low, value.nanosecondsSinceEpoch)
          high = Swift.max(high, value.nanosecondsSinceEpoch)
        }
        blackHole((low, high, start &+ Int64(i)))
      }
    }
    let scale = Double(iterations)
    return (BenchStats.minimum(samples.measured) / scale, BenchStats.minimum(samples.floor) / scale)
  }
}
