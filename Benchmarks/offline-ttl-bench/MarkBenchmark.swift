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
///    beside the serial rate of the floor measured right after each.
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
      try worker(Array(arguments.dropFirst()))
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
    let perThread = Swift.max(iterations / 4, 50)
    try threads(report, work: work.path, perThread: perThread)
    try processes(report, work: work.path, perProcess: perThread)
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
    // The same two, each run alone in a block (half the samples each, floor first): shows how
    // much the store's own writes slow the disk for whatever syncs next, which alternation
    // spreads over both figures.
    let half = Swift.max(iterations / 2, 20)
    let floorAlone = try BenchClock.runs(half) {
      try system.pwriteAll(floorFD, bytes: slot[...], at: Int64(floorSlot * 4096))
      try system.fdatasync(floorFD)
      floorSlot = 1 - floorSlot
    }
    let observeAlone = try BenchClock.runs(half) {
      now = now.saturatingAdvanced(by: .milliseconds(1))
      _ = try store.observe(now: now)
    }
    defer {
      report.record(
        "observe p50, run alone", BenchStats.median(observeAlone), unit: "ns",
        floor: ("floor p50, run alone just before", BenchStats.median(floorAlone)),
        note: "blocks, not alternated: noisier, no target")
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

  // MARK: 3. Throughput

  /// The serial rate of the floor, measured now in `work`: `count` in-place 128-byte
  /// `pwrite` + `fdatasync` one after the other, in operations per second.
  static func serialFloorRate(work: String, count: Int) throws -> Double {
    let system = Syscalls()
    let fd = try system.open(work + "/serial-floor", [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(fd) }
    try system.writeAll(fd, bytes: [UInt8](repeating: 0, count: 8192)[...])
    try system.fsync(fd)
    let slot = [UInt8](repeating: 0x3C, count: 128)
    let start = BenchClock.now()
    for index in 0..<count {
      try system.pwriteAll(fd, bytes: slot[...], at: Int64((index % 2) * 4096))
      try system.fdatasync(fd)
    }
    return Double(count) / (Double(BenchClock.now() - start) / 1e9)
  }

  static func threads(_ report: BenchReport, work: String, perThread: Int) throws {
    report.heading("throughput, 8 threads x \(perThread) observations")
    let base = try WallClockInstant(secondsSinceEpoch: 1_700_000_000)
    for shared in [true, false] {
      let dir = work + "/threads-\(shared ? "shared" : "own")"
      let first = FileClockMarkStore(atPath: dir)
      _ = try first.resetAfterOnlineSignIn(now: base)
      let failures = Mutex(0)
      let start = BenchClock.now()
      onEightThreads { _ in
        let store = shared ? first : FileClockMarkStore(atPath: dir)
        for _ in 0..<perThread {
          let now = base.saturatingAdvanced(by: .nanoseconds(Int64(BenchClock.now())))
          if (try? store.observe(now: now)) == nil { failures.withLock { $0 += 1 } }
        }
      }
      let seconds = Double(BenchClock.now() - start) / 1e9
      guard failures.withLock({ $0 }) == 0 else { throw BenchError.failed("observe failed") }
      let floorRate = try serialFloorRate(work: work, count: 8 * perThread)
      report.record(
        "8 threads, \(shared ? "one shared instance" : "own instances")",
        Double(8 * perThread) / seconds, unit: "obs/s",
        floor: ("serial pwrite + fdatasync rate, measured next", floorRate))
    }
  }

  static func processes(_ report: BenchReport, work: String, perProcess: Int) throws {
    report.heading("throughput, 8 processes x \(perProcess) observations")
    let dir = work + "/processes"
    _ = try FileClockMarkStore(atPath: dir).resetAfterOnlineSignIn(
      now: try WallClockInstant(secondsSinceEpoch: 1_700_000_000))
    let outputs = Mutex([String]())
    let errors = Mutex([String]())
    onEightThreads { _ in
      do {
        let line = try BenchProcess.run(
          executable: BenchProcess.selfExecutable,
          arguments: ["mark", "--worker", dir, String(perProcess)])
        outputs.withLock { $0.append(line) }
      } catch {
        errors.withLock { $0.append("\(error)") }
      }
    }
    if let error = errors.withLock({ $0.first }) { throw BenchError.failed(error) }
    let spans = outputs.withLock { $0 }.compactMap { line -> (UInt64, UInt64)? in
      let parts = line.split(whereSeparator: \.isWhitespace).compactMap { UInt64($0) }
      return parts.count == 2 ? (parts[0], parts[1]) : nil
    }
    guard spans.count == 8, let first = spans.map(\.0).min(), let last = spans.map(\.1).max()
    else { throw BenchError.failed("a worker printed no timing") }
    let floorRate = try serialFloorRate(work: work, count: 8 * perProcess)
    report.record(
      "8 processes", Double(8 * perProcess) / (Double(last - first) / 1e9), unit: "obs/s",
      floor: ("serial pwrite + fdatasync rate, measured next", floorRate),
      note: "from the first worker's first to the last worker's last observation")
  }

  /// `mark --worker DIR COUNT`: observes COUNT times and prints its first and last monotonic
  /// nanoseconds.
  static func worker(_ arguments: [String]) throws {
    guard arguments.count == 2, let count = Int(arguments[1]) else {
      throw BenchError.usage("mark --worker DIR COUNT")
    }
    let store = FileClockMarkStore(atPath: arguments[0])
    let base = try WallClockInstant(secondsSinceEpoch: 1_700_000_000)
    let start = BenchClock.now()
    for _ in 0..<count {
      _ = try store.observe(now: base.saturatingAdvanced(by: .nanoseconds(Int64(BenchClock.now()))))
    }
    print("\(start) \(BenchClock.now())")
  }
}

/// Runs `body` on 8 real threads at once (`concurrentPerform` would run only one per core) and
/// waits for them.
private func onEightThreads(_ body: @escaping @Sendable (Int) -> Void) {
  let group = DispatchGroup()
  for index in 0..<8 {
    group.enter()
    Thread {
      body(index)
      group.leave()
    }.start()
  }
  group.wait()
}
