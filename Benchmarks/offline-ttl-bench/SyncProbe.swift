import Foundation

/// Counts the system calls (every one; the `fdatasync` / `fsync` / write ones by name) of
/// `checkEligibility()` with
/// `strace -c`, to verify that a check within the mark resolution skips the write *and* the
/// sync. The child (this program with a hidden subcommand) signs in, writes one item, and makes
/// N checks; two children, with N = 0 and N = `checks`, give the per-check count by difference.
enum SyncProbe {
  /// The hidden subcommand the traced child runs.
  static let subcommand = "_sync-probe"

  /// System calls per check, by name.
  struct Counts {
    /// `fdatasync` + `fsync` calls per check.
    var syncs: Double
    /// `write` + `pwrite64` + `writev` + `pwritev` calls per check.
    var writes: Double
    /// Every system call per check, by name (differences of at least 0.005 either way, so that
    /// they sum to ``total``).
    var byName: [String: Double]
    /// All system calls per check.
    var total: Double
  }

  /// The strace executable, if installed.
  static var strace: String? {
    ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Traces two children and returns the per-check system calls for one kind of check.
  ///
  /// - Parameters:
  ///   - writing: `true` for markResolution 0, `false` for the default resolution.
  ///   - checks: The number of checks in the second child.
  ///   - directory: A work directory (each child uses its own store inside it).
  static func perCheck(writing: Bool, checks: Int, directory: String) throws -> Counts {
    guard let strace else { throw BenchError.failed("strace is not installed") }
    func traced(_ count: Int) throws -> [String: Int] {
      let store = directory + "/store-\(writing ? "writing" : "repeated")-\(count)"
      let output = directory + "/strace-\(writing ? "writing" : "repeated")-\(count).txt"
      try BenchProcess.run(
        executable: strace,
        arguments: [
          "-f", "-c", "-o", output, BenchProcess.selfExecutable, subcommand, "--dir", store,
          "--checks", String(count),
          writing ? "--writing" : "--repeated",
        ])
      return try parse(String(contentsOfFile: output, encoding: .utf8))
    }
    let none = try traced(0)
    let some = try traced(checks)
    func delta(_ names: [String]) -> Double {
      let difference = names.reduce(0) { $0 + (some[$1] ?? 0) - (none[$1] ?? 0) }
      return Double(difference) / Double(checks)
    }
    let names = Set(none.keys).union(some.keys).subtracting(["total"])
    var byName: [String: Double] = [:]
    for name in names {
      let calls = delta([name])
      if abs(calls) >= 0.005 { byName[name] = calls }
    }
    return Counts(
      syncs: delta(["fsync", "fdatasync"]),
      writes: delta(["write", "pwrite64", "writev", "pwritev"]), byName: byName,
      total: delta(names.sorted()))
  }

  /// Reads `strace -c` output: the `calls` column by system-call name.
  static func parse(_ text: String) -> [String: Int] {
    var calls: [String: Int] = [:]
    for line in text.split(separator: "\n") {
      let fields = line.split(whereSeparator: \.isWhitespace)
      guard fields.count >= 5, let name = fields.last, let count = Int(fields[3]),
        Double(fields[0]) != nil
      else { continue }
      calls[String(name)] = count
    }
    return calls
  }

  /// The child: sets up a 1-item store in `--dir` and makes `--checks` checks.
  static func run(arguments: [String]) throws {
    let options = try BenchArguments(
      arguments, flags: ["writing", "repeated"], options: ["dir", "checks"])
    guard let directory = options.value("dir") else { throw BenchError.usage("--dir is required") }
    guard let checks = Int(options.value("checks") ?? "0"), checks >= 0 else {
      throw BenchError.usage("--checks needs a count")
    }
    let check = try GateCheck(directory: directory, items: 1)
    if checks > 0 {
      if options.flag("writing") {
        _ = try check.writingChecks(checks)
      } else {
        _ = try check.repeatedChecks(checks)
      }
    }
  }
}
