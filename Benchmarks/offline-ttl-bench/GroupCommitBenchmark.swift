import Foundation
@_spi(SystemCalls) import OfflineTTL
import Synchronization

/// Part of `mark`: contended observations with rising clocks (issue 15, target 2: group commit).
///
/// Eight threads sharing one `FileClockMarkStore`, eight threads each with its own instance, and
/// eight processes (`offline-ttl-bench mark --worker DIR N`) observe at once, each reading a
/// rising clock inside the store's clocks closure (as the gate does: the clocks are read after
/// the stored mark). Throughput is timed from the first worker's first to the last worker's
/// last observation, beside the **floor**: the serial rate of the same number of in-place
/// 128-byte `pwrite` + `fdatasync`, one after the other, measured right after each figure in the
/// same directory. Latency p50 / p99 of one observation beside the floor's p50 / p99. Also the
/// share of observations whose write a concurrent one covered (no write, no `fdatasync`).
/// Target: >= 1.0x the serial rate for own instances and for processes.
enum GroupCommitBenchmark {
  /// What one worker (thread or process) measured.
  struct WorkerResult {
    var start: UInt64
    var end: UInt64
    /// Observations a concurrent write covered (no write, no `fdatasync`).
    var covered: Int
    /// Observations that wrote after reading their clocks twice: they read the record and the
    /// clocks while another writer held the lock, and what they then found under the lock did
    /// not cover them.
    var waitedThenWrote: Int
    /// When each of this worker's writing observations returned (`BenchClock`), to count how
    /// often one writer wrote twice in a row while others waited.
    var writes: [UInt64]
    var latencies: [UInt64]

    /// `start end covered waitedThenWrote writeCount write... latency...` on one line (a worker
    /// process's output).
    var line: String {
      ([start, end, UInt64(covered), UInt64(waitedThenWrote), UInt64(writes.count)] + writes
        + latencies).map(String.init).joined(separator: " ")
    }

    init(
      start: UInt64, end: UInt64, covered: Int, waitedThenWrote: Int, writes: [UInt64],
      latencies: [UInt64]
    ) {
      self.start = start
      self.end = end
      self.covered = covered
      self.waitedThenWrote = waitedThenWrote
      self.writes = writes
      self.latencies = latencies
    }

    init?(line: String) {
      let numbers = line.split(whereSeparator: \.isWhitespace).compactMap { UInt64($0) }
      guard numbers.count >= 5, numbers.count >= 5 + Int(numbers[4]) else { return nil }
      let writeCount = Int(numbers[4])
      self.init(
        start: numbers[0], end: numbers[1], covered: Int(numbers[2]),
        waitedThenWrote: Int(numbers[3]), writes: Array(numbers[5..<(5 + writeCount)]),
        latencies: Array(numbers[(5 + writeCount)...]))
    }
  }

  static let base = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  /// Observes `count` times with a rising clock read inside the clocks closure; counts how many
  /// times each observation read its clocks (twice: it waited, was not covered, and read them
  /// again under the lock).
  static func observe(_ store: FileClockMarkStore, count: Int) throws -> WorkerResult {
    var latencies: [UInt64] = []
    latencies.reserveCapacity(count)
    var writes: [UInt64] = []
    var covered = 0
    var waitedThenWrote = 0
    let start = BenchClock.now()
    for _ in 0..<count {
      let before = BenchClock.now()
      var readings = 0
      let transition = try store.observe(readingClocks: {
        readings += 1
        return ClockObservation(
          wall: base.saturatingAdvanced(by: .nanoseconds(Int64(BenchClock.now()))))
      })
      let after = BenchClock.now()
      latencies.append(after - before)
      if transition.coveringRecord != nil { covered += 1 }
      if transition.wrote {
        writes.append(after)
        if readings > 1 { waitedThenWrote += 1 }
      }
    }
    return WorkerResult(
      start: start, end: BenchClock.now(), covered: covered, waitedThenWrote: waitedThenWrote,
      writes: writes, latencies: latencies)
  }

  /// How many writes (of all workers, in the order they returned) came from the worker that made
  /// the write before, while another worker had an observation in progress: the lock went back
  /// to the writer that had just released it.
  static func sameWriterAgain(_ results: [WorkerResult]) -> Int {
    let writes = results.enumerated().flatMap { index, result in result.writes.map { ($0, index) } }
      .sorted { $0.0 < $1.0 }
    var again = 0
    for index in writes.indices.dropFirst() where writes[index].1 == writes[index - 1].1 {
      again += 1
    }
    return again
  }

  /// The serial floor, measured now in `work`: `count` in-place 128-byte `pwrite` + `fdatasync`
  /// one after the other. Returns operations per second and each operation's nanoseconds.
  static func serialFloor(work: String, count: Int) throws -> (rate: Double, samples: [UInt64]) {
    let system = Syscalls()
    let fd = try system.open(work + "/serial-floor", [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(fd) }
    try system.writeAll(fd, bytes: [UInt8](repeating: 0, count: 8192)[...])
    try system.fsync(fd)
    let slot = [UInt8](repeating: 0x3C, count: 128)
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    let start = BenchClock.now()
    for index in 0..<count {
      let before = BenchClock.now()
      try system.pwriteAll(fd, bytes: slot[...], at: Int64((index % 2) * 4096))
      try system.fdatasync(fd)
      samples.append(BenchClock.now() - before)
    }
    return (Double(count) / (Double(BenchClock.now() - start) / 1e9), samples)
  }

  static func run(_ report: BenchReport, work: String, perWorker: Int) throws {
    report.heading(
      "group commit: 8 writers x \(perWorker) observations, rising clocks (load \(loadAverage()))")
    for kind in ["threads, one shared instance", "threads, own instances", "processes"] {
      let dir = work + "/group-" + kind.filter(\.isLetter)
      _ = try FileClockMarkStore(atPath: dir).resetAfterOnlineSignIn(now: base)
      let results =
        try kind == "processes"
        ? processes(dir: dir, perWorker: perWorker)
        : threads(dir: dir, perWorker: perWorker, shared: kind.contains("shared"))
      let floor = try serialFloor(work: work, count: 8 * perWorker)
      let total = results.reduce(0) { $0 + $1.latencies.count }
      let span = results.map(\.end).max()! - results.map(\.start).min()!
      let latencies = results.flatMap(\.latencies)
      let covered = results.reduce(0) { $0 + $1.covered }
      let waitedThenWrote = results.reduce(0) { $0 + $1.waitedThenWrote }
      let writes = results.reduce(0) { $0 + $1.writes.count }
      report.record(
        "8 \(kind)", Double(total) / (Double(span) / 1e9), unit: "obs/s",
        floor: ("serial pwrite + fdatasync rate, measured next", floor.rate),
        target: kind.contains("shared") ? nil : .ratioAtLeast(1.0),
        note: "\(BenchFormat.number(100 * Double(covered) / Double(total)))% covered by another"
          + " write (no write, no fdatasync); \(writes) writes for \(total) observations,"
          + " \(waitedThenWrote) of them after waiting uncovered, \(sameWriterAgain(results))"
          + " by the writer of the write before")
      report.record(
        "8 \(kind): observe p50", BenchStats.median(latencies), unit: "ns",
        floor: ("serial floor p50", BenchStats.median(floor.samples)))
      report.record(
        "8 \(kind): observe p99", BenchStats.quantile(latencies, 0.99), unit: "ns",
        floor: ("serial floor p99", BenchStats.quantile(floor.samples, 0.99)))
    }
  }

  static func threads(dir: String, perWorker: Int, shared: Bool) throws -> [WorkerResult] {
    let first = FileClockMarkStore(atPath: dir)
    let results = Mutex<[WorkerResult]>([])
    let failures = Mutex<[String]>([])
    onEightThreads { _ in
      let store = shared ? first : FileClockMarkStore(atPath: dir)
      do {
        let result = try observe(store, count: perWorker)
        results.withLock { $0.append(result) }
      } catch {
        failures.withLock { $0.append("\(error)") }
      }
    }
    if let failure = failures.withLock({ $0.first }) { throw BenchError.failed(failure) }
    return results.withLock { $0 }
  }

  static func processes(dir: String, perWorker: Int) throws -> [WorkerResult] {
    let outputs = Mutex([String]())
    let errors = Mutex([String]())
    onEightThreads { _ in
      do {
        let output = try BenchProcess.run(
          executable: BenchProcess.selfExecutable,
          arguments: ["mark", "--worker", dir, String(perWorker)])
        outputs.withLock { $0.append(output) }
      } catch {
        errors.withLock { $0.append("\(error)") }
      }
    }
    if let error = errors.withLock({ $0.first }) { throw BenchError.failed(error) }
    let results = outputs.withLock { $0 }.compactMap(WorkerResult.init(line:))
    guard results.count == 8 else { throw BenchError.failed("a worker printed no timing") }
    return results
  }

  /// `mark --worker DIR COUNT`: observes COUNT times and prints one ``WorkerResult`` line.
  static func worker(_ arguments: [String]) throws {
    guard arguments.count == 2, let count = Int(arguments[1]) else {
      throw BenchError.usage("mark --worker DIR COUNT")
    }
    print(try observe(FileClockMarkStore(atPath: arguments[0]), count: count).line)
  }

  /// The 1-minute load average, for the figures' heading.
  static func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
      let first = text.split(separator: " ").first
    else { return "unknown" }
    return String(first)
  }
}

/// Runs `body` on 8 real threads at once (`concurrentPerform` would run only one per core) and
/// waits for them.
func onEightThreads(_ body: @escaping @Sendable (Int) -> Void) {
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
