import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import Synchronization

/// `mark`: the clock-mark store. Every figure beside its floor, measured in the same run and the
/// same directory:
/// 1. the two durability designs (temp file + rename + directory fsync vs. one in-place slot
///    `pwrite` + `fdatasync`), the measurement that chose the two-slot format;
/// 2. uncontended `observe` latency p50 / p99 vs one in-place `pwrite` + `fdatasync` of one slot
///    (the floor), target p50 <= 1.3 x floor;
/// 3. throughput with 8 threads (sharing one instance, and each with its own) and 8 processes,
///    beside the serial rate of the floor measured right after each, with latency p50 / p99
///    (`GroupCommitBenchmark`).
enum MarkBenchmark {
  static let usage = """
    usage: offline-ttl-bench mark [--json] [--quick] [--iterations N] [--backend file|secret-service]

    Clock-mark store: observe latency (p50, p99) beside one in-place pwrite + fdatasync of the
    same size, the rename-vs-slots design measurement, and 8-thread / 8-process throughput.
      --quick          fewer iterations (200) for a smoke run
      --iterations N   latency samples per figure (default 2000)
      --backend secret-service
                       observe latency of the Secret Service store beside the file store's,
                       alternated in one run (SecretService trait; run inside a session bus
                       with an unlocked keyring, e.g. Scripts/with-secret-service.sh)
    """

  static func run(arguments: [String], json: Bool) throws {
    if arguments.first == "--worker" {
      try GroupCommitBenchmark.worker(Array(arguments.dropFirst()))
      return
    }
    if arguments.contains("--help") {
      print(usage)
      return
    }
    let options = try BenchArguments(
      arguments, flags: ["quick"], options: ["iterations", "backend"])
    let iterations = try options.positiveInt(
      "iterations", default: options.flag("quick") ? 200 : 2000)
    let report = BenchReport(section: "mark", json: json)
    let work = try BenchProcess.workDirectory("mark")
    defer { BenchProcess.discard(work) }

    switch options.value("backend") {
    case nil, "file": break
    case "secret-service":
      try SecretServiceMarkBenchmark.run(report, work: work.path, iterations: iterations)
      return
    case let other?: throw BenchError.usage("--backend: unknown backend '\(other)'")
    }
    try designs(report, work: work.path, iterations: iterations)
    try observeLatency(report, work: work.path, iterations: iterations)
    try systemCallsPerObserve(report, work: work.path)
    try GroupCommitBenchmark.run(
      report, work: work.path, perWorker: Swift.max(iterations / 4, 50))
  }

  // MARK: 1. Durability designs

  static func designs(_ report: BenchReport, work: String, iterations: Int) throws {
    report.heading("durability design, one 128-byte record (\(iterations) cycles each, alternated)")
    let system = Syscalls()
    let dir = work + "/designs"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let dirFD = try system.open(dir, [.readOnly, .directory])
    defer { system.closeIgnoringErrors(dirFD) }
    let slotFD = try system.openat(dirFD, "slots", [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(slotFD) }
    try system.writeAll(slotFD, bytes: [UInt8](repeating: 0, count: 8192)[...])
    try system.fsync(slotFD)
    let record = [UInt8](repeating: 0xA5, count: 128)
    var slot = 0
    let (renameSamples, slotSamples) = try BenchClock.paired(
      iterations,
      measured: {
        let fd = try system.openat(dirFD, "r.tmp", [.writeOnly, .create, .truncate], mode: 0o600)
        try system.writeAll(fd, bytes: record[...])
        try system.fsync(fd)
        try system.close(fd)
        try system.renameat(dirFD, "r.tmp", to: "r")
        try system.fsync(dirFD)
      },
      floor: {
        try system.pwriteAll(slotFD, bytes: record[...], at: Int64(slot * 4096))
        try system.fdatasync(slotFD)
        slot = 1 - slot
      })
    let slotP50 = BenchStats.median(slotSamples)
    report.record(
      "two slots: pwrite + fdatasync p50", slotP50, unit: "ns")
    report.record(
      "two slots: pwrite + fdatasync p99", BenchStats.quantile(slotSamples, 0.99), unit: "ns")
    report.record(
      "temp + fsync + rename + fsync(dir) p50", BenchStats.median(renameSamples), unit: "ns",
      floor: ("two slots p50", slotP50), note: "the two-slot design was chosen")
    report.record(
      "temp + fsync + rename + fsync(dir) p99", BenchStats.quantile(renameSamples, 0.99),
      unit: "ns")
  }

  // MARK: System calls of one writing observe

  /// Counts with `strace -c -f` the system calls of a long-lived store's writing observations
  /// (`mark --worker`, a rising clock), by difference between a child making 1 and one making
  /// 201 (the first operation of a store value takes the full path), beside the floor's 2
  /// (`pwrite` + `fdatasync`). Skipped with a note when strace is missing.
  static func systemCallsPerObserve(_ report: BenchReport, work: String) throws {
    guard let strace = SyncProbe.strace else {
      report.note("strace is not installed: system calls per writing observe not counted")
      return
    }
    func traced(_ count: Int) throws -> [String: Int] {
      let dir = work + "/strace-\(count)"
      _ = try FileClockMarkStore(atPath: dir).resetAfterOnlineSignIn(
        now: GroupCommitBenchmark.base)
      let output = work + "/strace-\(count).txt"
      try BenchProcess.run(
        executable: strace,
        arguments: [
          "-f", "-c", "-o", output, BenchProcess.selfExecutable, "mark", "--worker", dir,
          String(count),
        ])
      return SyncProbe.parse(try String(contentsOfFile: output, encoding: .utf8))
    }
    let one = try traced(1)
    let many = try traced(201)
    func perObserve(_ names: [String]) -> Double {
      Double(names.reduce(0) { $0 + (many[$1] ?? 0) - (one[$1] ?? 0) }) / 200
    }
    let names = Set(one.keys).union(many.keys).subtracting(["total"]).sorted()
    // Every name whose count differs (either way: a child's start-up can make more calls in the
    // shorter run), so that the breakdown sums to the total printed.
    let breakdown = names.compactMap { name -> String? in
      let calls = perObserve([name])
      return abs(calls) >= 0.005 ? "\(name) \(BenchFormat.number(calls))" : nil
    }
    report.record(
      "system calls per writing observe (strace)", perObserve(names), unit: "calls",
      floor: ("pwrite + fdatasync", 2), note: breakdown.joined(separator: ", "))
  }

  // MARK: 2. Uncontended observe latency

  /// Returns the floor's p50 in nanoseconds.
  @discardableResult
  static func observeLatency(_ report: BenchReport, work: String, iterations: Int) throws
    -> Double
  {
    report.heading("uncontended observe (\(iterations) samples, alternated with the floor)")
    let dir = work + "/observe"
    let store = FileClockMarkStore(atPath: dir)
    var now = try WallClockInstant(secondsSinceEpoch: 1_700_000_000)
    _ = try store.resetAfterOnlineSignIn(now: now)
    let system = Syscalls()
    let floorFD = try system.open(dir + "/floor", [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(floorFD) }
    try system.writeAll(floorFD, bytes: [UInt8](repeating: 0, count: 8192)[...])
    try system.fsync(floorFD)
    let slot = [UInt8](repeating: 0x5A, count: 128)
    var floorSlot = 0
    let (observeSamples, floorSamples) = try BenchClock.paired(
      iterations,
      measured: {
        now = now.saturatingAdvanced(by: .milliseconds(1))
        let transition = try store.observe(now: now)
        guard transition.wrote else { throw BenchError.failed("observe did not write") }
      },
      floor: {
        try system.pwriteAll(floorFD, bytes: slot[...], at: Int64(floorSlot * 4096))
        try system.fdatasync(floorFD)
        floorSlot = 1 - floorSlot
      })
    // The same two, each run alone (issue 15, target 3): blocks of 50 samples, floor and observe
    // alternating block by block over the whole run, the samples of each pooled. Alternating
    // sample by sample spreads any slowdown that one side's writes cause for the next sync over
    // both figures; a block shows it where it belongs, and alternating the blocks keeps a drift
    // in the disk's load from landing on one side only.
    let block = 50
    var floorAlone: [UInt64] = []
    var observeAlone: [UInt64] = []
    for _ in 0..<Swift.max(iterations / block, 2) {
      floorAlone += try BenchClock.runs(block) {
        try system.pwriteAll(floorFD, bytes: slot[...], at: Int64(floorSlot * 4096))
        try system.fdatasync(floorFD)
        floorSlot = 1 - floorSlot
      }
      observeAlone += try BenchClock.runs(block) {
        now = now.saturatingAdvanced(by: .milliseconds(1))
        _ = try store.observe(now: now)
      }
    }
    defer {
      report.record(
        "observe p50, run alone", BenchStats.median(observeAlone), unit: "ns",
        floor: ("floor p50, run alone", BenchStats.median(floorAlone)),
        target: .ratioAtMost(1.25),
        note: "blocks of \(block), alternated block by block (issue 15, target 3)")
      report.record(
        "observe p99, run alone", BenchStats.quantile(observeAlone, 0.99), unit: "ns",
        floor: ("floor p99, run alone", BenchStats.quantile(floorAlone, 0.99)))
    }
    let floorP50 = BenchStats.median(floorSamples)
    let floorP99 = BenchStats.quantile(floorSamples, 0.99)
    report.record(
      "observe p50", BenchStats.median(observeSamples), unit: "ns",
      floor: ("pwrite 128 B + fdatasync p50", floorP50), target: .ratioAtMost(1.3))
    report.record(
      "observe p99", BenchStats.quantile(observeSamples, 0.99), unit: "ns",
      floor: ("pwrite 128 B + fdatasync p99", floorP99))
    return floorP50
  }
}
