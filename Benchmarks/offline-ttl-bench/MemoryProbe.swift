import Foundation
import OfflineTTL

/// Peak memory of an evaluation, measured in a fresh child process (this program re-run with a
/// hidden subcommand) so that earlier benchmarks do not raise the high-water mark.
enum MemoryProbe {
  /// The hidden subcommand the child runs.
  static let subcommand = "_memory-probe"

  /// What the child reports.
  struct Result {
    /// VmHWM before the item array exists, in bytes.
    let baselineBytes: Int64
    /// VmHWM after building the array and evaluating it, in bytes.
    let peakBytes: Int64
  }

  /// Runs the child for `items` items and returns its figures.
  ///
  /// - Throws: ``BenchError`` when the child fails or prints something unexpected.
  static func spawn(items: Int) throws -> Result {
    let output = try BenchProcess.run(
      executable: BenchProcess.selfExecutable, arguments: [subcommand, "--items", String(items)])
    let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Int64($0) }
    guard fields.count == 2 else {
      throw BenchError.failed("memory probe printed '\(output)'")
    }
    return Result(baselineBytes: fields[0], peakBytes: fields[1])
  }

  /// The child: prints `baseline peak` in bytes.
  static func run(arguments: [String]) throws {
    let options = try BenchArguments(arguments, flags: [], options: ["items"])
    let n = try options.positiveInt("items", default: 1_000_000)
    let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400))
    let baseline = try highWaterMark()
    let base: Int64 = 1_700_000_000_000_000_000
    let items = EvaluationBenchmark.items(count: n, base: base)
    let evaluation = policy.evaluate(
      writtenAt: opaque(items), now: WallClockInstant(nanosecondsSinceEpoch: base + 1),
      mark: nil)
    blackHole(evaluation)
    let peak = try highWaterMark()
    blackHole(items)
    print("\(baseline) \(peak)")
  }

  /// This process's peak resident set size (`VmHWM` in `/proc/self/status`), in bytes.
  static func highWaterMark() throws -> Int64 {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      let digits = line.dropFirst("VmHWM:".count).split(whereSeparator: \.isWhitespace).first
      if let digits, let kilobytes = Int64(digits) { return kilobytes * 1024 }
    }
    throw BenchError.failed("no VmHWM line in /proc/self/status")
  }
}
