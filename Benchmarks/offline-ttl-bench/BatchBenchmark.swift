import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `batch`: `offline-ttl evaluate --batch` (the release binary, run as a child process) on
/// generated JSON Lines, beside the floor of reading and splitting the same bytes.
enum BatchBenchmark {
  static let help = """
    usage: offline-ttl-bench batch [--json] [--quick] [--lines N] [--binary PATH] [--no-build]

    Generates N JSON Lines cases (default 1,000,000), feeds them to `offline-ttl evaluate --batch`
    on stdin (output to a file) and reports cases per second (target >= 200,000/s) beside the
    floor: reading the same file with read(2) and splitting it into lines, in this process.
    Before measuring it runs `swift build -c release --product offline-ttl` (not timed) so the
    binary is current.
      --quick        100,000 lines, one run
      --lines N      the number of generated lines
      --binary PATH  the offline-ttl executable (default: beside this program)
      --no-build     do not run swift build first
    """

  static func run(arguments: [String], json: Bool) throws {
    guard
      let options = try BenchArguments.parse(
        arguments, help: help, flags: ["no-build"], options: ["lines", "binary"])
    else { return }
    let quick = options.flag("quick")
    let lines = try options.positiveInt("lines", default: quick ? 100_000 : 1_000_000)
    let runs = quick ? 1 : 3
    let report = BenchReport(section: "batch", json: json)
    report.heading("offline-ttl evaluate --batch on \(BenchFormat.grouped(Int64(lines))) lines")

    let binary = try locateBinary(options, report: report)
    let directory = try BenchProcess.workDirectory("batch")
    let input = directory.appendingPathComponent("cases.jsonl").path
    let output = directory.appendingPathComponent("results.jsonl").path
    let bytes = try generate(lines: lines, to: input)
    report.note(
      "input: \(BenchFormat.grouped(Int64(bytes))) bytes, \(BenchFormat.grouped(Int64(lines)))"
        + " lines (1-4 items, unit s); binary: \(binary)")

    var ours: [UInt64] = []
    var floor: [UInt64] = []
    _ = try readAndSplit(input)  // warm the page cache
    for _ in 0..<runs {
      var counted = 0
      floor.append(try BenchClock.time { counted = try readAndSplit(input) })
      guard counted == lines else {
        throw BenchError.failed("floor split \(counted) lines, expected \(lines)")
      }
      ours.append(
        try BenchClock.time {
          try BenchProcess.run(
            executable: binary, arguments: ["evaluate", "--batch"], stdinPath: input,
            stdoutPath: output)
        })
      let answered = try readAndSplit(output)
      guard answered == lines else {
        throw BenchError.failed("offline-ttl answered \(answered) lines for \(lines) cases")
      }
    }
    try checkSample(output)
    let oursNs = BenchStats.median(ours) / Double(lines)
    let floorNs = BenchStats.median(floor) / Double(lines)
    report.record(
      "per case", oursNs, unit: "ns", floor: ("read(2) + split lines", floorNs),
      note: "median of \(runs) run(s), process start included")
    report.record(
      "cases per second", 1e9 / oursNs, unit: "cases/s",
      floor: ("lines/s read + split", 1e9 / floorNs), target: .valueAtLeast(200_000))
    BenchProcess.discard(directory)
  }

  /// The `offline-ttl` binary to run, built first unless `--no-build` or `--binary` was given.
  static func locateBinary(_ options: BenchArguments, report: BenchReport) throws -> String {
    if let path = options.value("binary") { return path }
    let path = BenchProcess.executableDirectory.appendingPathComponent("offline-ttl").path
    if !options.flag("no-build") {
      let root = BenchProcess.packageRoot.path
      let elapsed = try BenchClock.time {
        try BenchProcess.run(
          executable: "/usr/bin/env",
          arguments: [
            "swift", "build", "-c", "release", "--product", "offline-ttl", "--package-path", root,
          ])
      }
      report.note(
        "swift build -c release --product offline-ttl: \(BenchFormat.number(Double(elapsed) / 1e9)) s"
          + " (not counted)")
    }
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw BenchError.failed("no offline-ttl at \(path): run swift build -c release first")
    }
    return path
  }

  /// Writes `lines` deterministic cases to `path` and returns the byte count. About one case in
  /// ten has no mark (first use); ages and rollbacks vary so every status occurs.
  static func generate(lines: Int, to path: String) throws -> Int {
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    func next(_ bound: UInt64) -> Int64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int64((state >> 17) % bound)
    }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(lines * 100)
    func append(_ text: StaticString) {
      text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }
    func append(_ value: Int64) {
      buffer.append(contentsOf: String(value).utf8)
    }
    let base: Int64 = 1_700_000_000
    for _ in 0..<lines {
      let now = base + next(1_000_000)
      let count = 1 + next(4)
      append("{\"written_at\":[")
      for index in 0..<count {
        if index > 0 { append(",") }
        append(now - next(800_000) + 10)
      }
      append("],\"now\":")
      append(now)
      append(",\"mark\":")
      if next(10) == 0 {
        append("null")
      } else {
        append(now - 1_000 + next(1_200))
      }
      append(",\"max_age\":")
      append(next(2) == 0 ? 604_800 : 86_400)
      append("}\n")
    }
    guard FileManager.default.createFile(atPath: path, contents: Data(buffer)) else {
      throw BenchError.failed("cannot write \(path)")
    }
    return buffer.count
  }

  /// The floor: reads the file with read(2) in 1 MiB chunks and finds every line end (memchr),
  /// returning the number of non-empty lines.
  static func readAndSplit(_ path: String) throws -> Int {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw BenchError.failed("cannot open \(path): errno \(errno)") }
    defer { close(fd) }
    let capacity = 1 << 20
    let chunk = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    defer { chunk.deallocate() }
    var lines = 0
    var lineLength = 0
    while true {
      let got = read(fd, chunk, capacity)
      if got < 0 {
        if errno == EINTR { continue }
        throw BenchError.failed("read \(path): errno \(errno)")
      }
      if got == 0 { break }
      var offset = 0
      while offset < got {
        guard let hit = memchr(chunk + offset, 0x0A, got - offset) else {
          lineLength += got - offset
          break
        }
        let end = hit - chunk
        lineLength += end - offset
        if lineLength > 0 { lines += 1 }
        lineLength = 0
        offset = end + 1
      }
    }
    if lineLength > 0 { lines += 1 }
    blackHole(lines)
    return lines
  }

  /// Checks that the answers look like answers (a status or an error on each sampled line).
  static func checkSample(_ path: String) throws {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw BenchError.failed("cannot read \(path)")
    }
    defer { try? handle.close() }
    let head = String(decoding: handle.readData(ofLength: 4_096), as: UTF8.self)
    let first = head.split(separator: "\n").prefix(10)
    guard !first.isEmpty, first.allSatisfy({ $0.contains("\"status\"") }) else {
      throw BenchError.failed("unexpected offline-ttl output: \(first.first ?? "")")
    }
  }
}
