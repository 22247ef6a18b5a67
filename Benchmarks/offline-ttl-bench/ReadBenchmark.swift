import Foundation
import OfflineTTLTestDoubles

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `read`: `offline-ttl read` and `read --json` of a large item (the release binary, run as a
/// child process, stdout to /dev/null) beside `cat` of the item file: throughput and peak
/// resident memory.
enum ReadBenchmark {
  static let help = """
    usage: offline-ttl-bench read [--json] [--quick] [--mib N] [--rounds N] [--binary PATH] [--no-build]

    Signs in (with `offline-ttl sign-in`) one item of N MiB (default 512) and one of N/8 MiB,
    then, in interleaved rounds, runs `cat` of the item file (the floor: the raw bytes read
    and written), `offline-ttl read` and `offline-ttl read --json`, stdout to /dev/null, and
    reports MB/s (payload bytes per second) and each process's peak resident set (ru_maxrss,
    what `/usr/bin/time -v` prints). Targets: `read --json` >= 0.5 x the throughput of `read`;
    peak memory constant: the large item's peak <= 1.2 x the small item's.
      --quick        N = 64, one round
      --mib N        the large item's size in MiB
      --rounds N     measured rounds (default 3; the median is reported)
      --binary PATH  the offline-ttl executable (default: beside this program)
      --no-build     do not run swift build first
    """

  static func run(arguments: [String], json: Bool) throws {
    guard
      let options = try BenchArguments.parse(
        arguments, help: help, flags: ["no-build"], options: ["mib", "rounds", "binary"])
    else { return }
    let quick = options.flag("quick")
    let mib = try options.positiveInt("mib", default: quick ? 64 : 512)
    let rounds = try options.positiveInt("rounds", default: quick ? 1 : 3)
    let report = BenchReport(section: "read", json: json)
    report.heading("offline-ttl read of a \(mib) MiB item, raw and --json, beside cat")
    let binary = try BatchBenchmark.locateBinary(options, report: report)
    let directory = try BenchProcess.workDirectory("read")
    defer { BenchProcess.discard(directory) }
    let store = directory.appendingPathComponent("store").path
    let small = Swift.max(1, mib / 8)
    let sizes = [("large", mib << 20), ("small", small << 20)]
    for (key, size) in sizes {
      let input = directory.appendingPathComponent("input-\(key)").path
      try writePattern(size: size, to: input)
      try BenchProcess.run(
        executable: binary, arguments: ["sign-in", "--store", store, "--put", "\(key)=\(input)"])
    }
    report.note("load: \(BenchFormat.loadAverage()); binary: \(binary)")
    let readArguments = ["read", "--store", store, "--max-age", "7d"]
    // Verify once (not timed) that the bytes arrive exactly.
    let check = directory.appendingPathComponent("check").path
    try BenchProcess.run(
      executable: binary, arguments: readArguments + ["small"], stdoutPath: check)
    guard try sameBytes(check, directory.appendingPathComponent("input-small").path) else {
      throw BenchError.failed("offline-ttl read did not write the item's bytes exactly")
    }
    for name in ["check", "input-small", "input-large"] {
      try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }
    let timeTool = FileManager.default.isExecutableFile(atPath: "/usr/bin/time")
    report.note(
      timeTool
        ? "peak RSS: /usr/bin/time -f %M (the child's own peak resident set)"
        : "peak RSS: ru_maxrss from wait4 (/usr/bin/time is missing; a spawned child's figure"
          + " can include this program's own peak)")

    var results: [String: [Measured]] = [:]
    for (key, size) in sizes {
      let itemFile = store + "/cache/items/" + key
      let commands: [(String, String, [String])] = [
        ("cat", "/bin/cat", [itemFile]),
        ("read", binary, readArguments + [key]),
        ("json", binary, readArguments + ["--json", key]),
      ]
      _ = try spawnMeasured("/bin/cat", [itemFile])  // warm the page cache
      let measuredRounds = key == "large" ? rounds : 1
      for _ in 0..<measuredRounds {
        for (name, executable, arguments) in commands {
          let measured = try spawnMeasured(executable, arguments)
          results["\(key)-\(name)", default: []].append(measured)
        }
      }
      _ = size
    }
    let payload = Double(mib << 20)
    func median(_ name: String) -> Measured {
      let list = results[name]!.sorted { $0.nanoseconds < $1.nanoseconds }
      return list[list.count / 2]
    }
    let cat = median("large-cat")
    let raw = median("large-read")
    let json = median("large-json")
    func rate(_ measured: Measured) -> Double {
      payload / 1e6 / (Double(measured.nanoseconds) / 1e9)
    }
    report.record(
      "cat of the item file (floor), \(mib) MiB", rate(cat), unit: "MB/s",
      note: "peak RSS \(BenchFormat.grouped(Int64(cat.peakKiB))) KiB")
    report.record(
      "read (raw bytes), \(mib) MiB", rate(raw), unit: "MB/s",
      floor: ("cat MB/s", rate(cat)),
      note: "recheck, header, CRC pass, serving pass; median of \(rounds)")
    report.record(
      "read --json, \(mib) MiB", rate(json), unit: "MB/s", floor: ("read MB/s", rate(raw)),
      target: .ratioAtLeast(0.5), note: "base64 in 768 KiB chunks; median of \(rounds)")
    report.record(
      "read --json vs cat", rate(json), unit: "MB/s", floor: ("cat MB/s", rate(cat)))
    for name in ["read", "json"] {
      let large = median("large-\(name)")
      let smallRun = median("small-\(name)")
      report.record(
        "peak RSS, \(name == "json" ? "read --json" : "read"), \(mib) MiB item",
        Double(large.peakKiB), unit: "KiB",
        floor: ("same, \(small) MiB item", Double(smallRun.peakKiB)),
        target: .ratioAtMost(1.2),
        note: "payload \(BenchFormat.grouped(Int64(mib << 10))) KiB")
    }
  }

  /// A child's wall time and peak resident set.
  struct Measured {
    let nanoseconds: UInt64
    let peakKiB: Int
  }

  /// Runs `executable` with stdout to /dev/null, through `/usr/bin/time -f %M` when it exists
  /// (a child spawned from this process inherits this process's peak in `ru_maxrss`; one forked
  /// by `time` does not), and measures its wall time.
  static func spawnMeasured(_ executable: String, _ arguments: [String]) throws -> Measured {
    let timeTool = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: timeTool) else {
      return try spawnWaited(executable, arguments)
    }
    let output = FileManager.default.temporaryDirectory
      .appendingPathComponent("offline-ttl-bench-time-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: output) }
    let measured = try spawnWaited(
      timeTool, ["-f", "%M", "-o", output, executable] + arguments)
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    guard let peak = text.split(separator: "\n").last.flatMap({ Int($0) }) else {
      throw BenchError.failed("/usr/bin/time wrote no peak: \(text)")
    }
    return Measured(nanoseconds: measured.nanoseconds, peakKiB: peak)
  }

  /// Runs `executable` with stdout to /dev/null and measures it with `wait4` (`ru_maxrss`, KiB).
  static func spawnWaited(_ executable: String, _ arguments: [String]) throws -> Measured {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let started = BenchClock.now()
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else {
      throw BenchError.failed("cannot run \(executable): errno \(spawned)")
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
      guard errno == EINTR else { throw BenchError.failed("wait4 failed: errno \(errno)") }
    }
    let elapsed = BenchClock.now() - started
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
      throw BenchError.failed("\(executable) \(arguments.joined(separator: " ")) failed: \(status)")
    }
    return Measured(nanoseconds: elapsed, peakKiB: Int(usage.ru_maxrss))
  }

  /// Writes `size` deterministic bytes (a multiple of 8) to `path` in 1 MiB chunks, so this
  /// process's own peak memory stays small.
  static func writePattern(size: Int, to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let handle = FileHandle(forWritingAtPath: path)
    else { throw BenchError.failed("cannot write \(path)") }
    defer { try? handle.close() }
    var random = SplitMix64(seed: 1)
    var chunk = [UInt64](repeating: 0, count: 1 << 17)
    var left = size
    while left > 0 {
      for index in chunk.indices { chunk[index] = random.next() }
      let count = Swift.min(left, chunk.count * 8)
      try chunk.withUnsafeBytes { try handle.write(contentsOf: Data($0.prefix(count))) }
      left -= count
    }
  }

  /// Whether two files hold the same bytes (compared in 1 MiB chunks).
  static func sameBytes(_ a: String, _ b: String) throws -> Bool {
    guard let first = FileHandle(forReadingAtPath: a), let second = FileHandle(forReadingAtPath: b)
    else { throw BenchError.failed("cannot open \(a) or \(b)") }
    defer {
      try? first.close()
      try? second.close()
    }
    while true {
      let x = try first.read(upToCount: 1 << 20) ?? Data()
      let y = try second.read(upToCount: 1 << 20) ?? Data()
      if x != y { return false }
      if x.isEmpty { return true }
    }
  }
}

extension BenchFormat {
  /// The 1, 5 and 15-minute load averages from `/proc/loadavg` (what `uptime` prints), or
  /// "unknown".
  static func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else {
      return "unknown"
    }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }
}
