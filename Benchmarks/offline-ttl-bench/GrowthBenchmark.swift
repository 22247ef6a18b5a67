import Foundation
import OfflineTTL

/// `growth`: how `checkEligibility()` grows with the item count (should be flat: the gate reads
/// a summary, not the items) and how pure evaluation grows with n (should be linear: flat
/// nanoseconds per item).
enum GrowthBenchmark {
  static let help = """
    usage: offline-ttl-bench growth [--json] [--quick] [--max-items N]

    checkEligibility() on caches of 1, 10, 100, 1,000, 10,000 and 100,000 items, written in one
    online session each: the repeated (non-writing) check and the writing check (markResolution
    0), each beside the same check on the 1-item cache (target at 100,000 items: ratio <= 2).
    Then pure evaluation for n = 1 to 1,000,000 in nanoseconds per item beside the min/max loop
    (linear when the per-item figure is flat).
      --quick          fewer checks and iterations, caches up to 10,000 items
      --max-items N    the largest cache (default 100,000)
    """

  static func run(arguments: [String], json: Bool) throws {
    let options = try BenchArguments(
      arguments, flags: ["quick", "help"], options: ["max-items"])
    if options.flag("help") {
      print(help)
      return
    }
    let quick = options.flag("quick")
    let maxItems = try options.positiveInt("max-items", default: quick ? 10_000 : 100_000)
    let report = BenchReport(section: "growth", json: json)

    report.heading("pure evaluation vs n (linear: flat ns per item)")
    let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400))
    var n = 1
    var perEvaluation: [Int: Double] = [:]
    while n <= 1_000_000 {
      let cost = EvaluationBenchmark.measure(n: n, policy: policy, quick: true)
      perEvaluation[n] = cost.ours
      report.record(
        "evaluate n=\(BenchFormat.grouped(Int64(n))) per item", cost.ours / Double(n),
        unit: "ns/item", floor: ("min/max loop", cost.floor / Double(n)))
      n *= 10
    }
    if let small = perEvaluation[1_000], let large = perEvaluation[1_000_000], small > 0 {
      report.record(
        "evaluate time n=1,000,000 / n=1,000", large / small, unit: "x",
        floor: ("linear growth", 1_000), note: "ratio near 1 = linear")
    }

    report.heading("checkEligibility() vs item count (flat: ratio to 1 item near 1)")
    let directory = try BenchProcess.workDirectory("growth")
    defer { try? FileManager.default.removeItem(at: directory) }
    var counts: [Int] = []
    var count = 1
    while count <= maxItems {
      counts.append(count)
      count *= 10
    }
    if counts.last != maxItems { counts.append(maxItems) }
    let repeated = quick ? 500 : 2_000
    let writing = quick ? 50 : 200
    var baseline: (repeated: Double, writing: Double)? = nil
    for items in counts {
      var setup: UInt64 = 0
      var check: GateCheck? = nil
      setup = try BenchClock.time {
        check = try GateCheck(
          directory: directory.appendingPathComponent("items-\(items)").path, items: items)
      }
      guard let check else { continue }
      let repeatedP50 = BenchStats.median(try check.repeatedChecks(repeated))
      let writingP50 = BenchStats.median(try check.writingChecks(writing))
      let first = baseline ?? (repeatedP50, writingP50)
      baseline = first
      let label = BenchFormat.grouped(Int64(items))
      let isLargest = items == counts.last && items > 1
      report.record(
        "repeated check p50, \(label) items", repeatedP50, unit: "ns",
        floor: ("same, 1 item", first.repeated), target: isLargest ? .ratioAtMost(2) : nil,
        note: "setup \(BenchFormat.number(Double(setup) / 1e9)) s")
      report.record(
        "writing check p50, \(label) items", writingP50, unit: "ns",
        floor: ("same, 1 item", first.writing), target: isLargest ? .ratioAtMost(2) : nil)
    }
  }
}
