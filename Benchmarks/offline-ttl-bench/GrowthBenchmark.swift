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
    guard let options = try BenchArguments.parse(arguments, help: help, options: ["max-items"])
    else { return }
    let quick = options.flag("quick")
    let maxItems = try options.positiveInt("max-items", default: quick ? 10_000 : 100_000)
    let report = BenchReport(section: "growth", json: json)

    report.heading("pure evaluation vs n (linear: flat ns per item)")
    let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400))
    var n = 1
    var perEvaluation: [Int: Double] = [:]
    while n <= 1_000_000 {
      let cost = EvaluationBenchmark.measure(
        n: n, policy: policy, quick: quick, runs: quick ? 7 : 21)
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
    // Kept between runs: deleting 100,000 files can take minutes on a busy virtual disk.
    let directory = BenchProcess.packageRoot.appendingPathComponent(
      ".build/bench-work/growth-caches")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    var counts: [Int] = []
    var count = 1
    while count <= maxItems {
      counts.append(count)
      count *= 10
    }
    if counts.last != maxItems { counts.append(maxItems) }
    // Build every cache first, then measure in interleaved rounds (all sizes, and the
    // pwrite + fdatasync floor, in each round) so that load from other processes hits every
    // size alike.
    var checks: [(items: Int, check: GateCheck)] = []
    for items in counts {
      var made: GateCheck? = nil
      let setup = try BenchClock.time {
        made = try GateCheck(
          directory: directory.appendingPathComponent("items-\(items)").path, items: items,
          reuse: true)
      }
      guard let made else { continue }
      checks.append((items, made))
      report.note(
        "cache of \(BenchFormat.grouped(Int64(items))) items "
          + (made.reused
            ? "kept from an earlier run"
            : "written in one online session: \(BenchFormat.number(Double(setup) / 1e9)) s"))
    }
    let floor = try DurabilityFloor(directory: directory.path)
    defer { floor.close() }
    let rounds = quick ? 2 : 4
    let repeated = quick ? 200 : 500
    let writing = quick ? 20 : 50
    var repeatedSamples = [[UInt64]](repeating: [], count: checks.count)
    var writingSamples = [[UInt64]](repeating: [], count: checks.count)
    var floorSamples: [UInt64] = []
    let measuring = BenchClock.now()
    for _ in 0..<rounds {
      for (index, entry) in checks.enumerated() {
        repeatedSamples[index] += try entry.check.repeatedChecks(repeated)
        writingSamples[index] += try entry.check.writingChecks(writing)
        floorSamples += try floor.measure(count: writing / checks.count + 1)
      }
    }
    report.note(
      "measured in \(BenchFormat.number(Double(BenchClock.now() - measuring) / 1e9)) s")
    let floorP50 = BenchStats.median(floorSamples)
    report.record("floor: pwrite 64 B + fdatasync p50", floorP50, unit: "ns")
    let firstRepeated = BenchStats.median(repeatedSamples[0])
    let firstWriting = BenchStats.median(writingSamples[0])
    for (index, entry) in checks.enumerated() {
      let label = BenchFormat.grouped(Int64(entry.items))
      let isLargest = index == checks.count - 1 && entry.items > 1
      report.record(
        "repeated check p50, \(label) items", BenchStats.median(repeatedSamples[index]),
        unit: "ns", floor: ("same, 1 item", firstRepeated),
        target: isLargest ? .ratioAtMost(2) : nil)
      report.record(
        "writing check p50, \(label) items", BenchStats.median(writingSamples[index]),
        unit: "ns", floor: ("same, 1 item", firstWriting),
        target: isLargest ? .ratioAtMost(2) : nil,
        note: "\(BenchFormat.ratio(BenchStats.median(writingSamples[index]) / floorP50))"
          + " the pwrite+fdatasync floor")
    }
  }
}
