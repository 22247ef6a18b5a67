// offline-ttl-bench: every figure printed beside its floor measured in the same run.
// Build with `swift build -c release`; run `swift run -c release offline-ttl-bench all`.
// Figures and floors are explained in Benchmarks/README.md.
import Foundation

let usage = """
  usage: offline-ttl-bench <subcommand> [--json] [options]

  Every figure is printed beside its floor (the unavoidable work, measured in the same run),
  with the ratio and the target. Build in release mode first: swift build -c release.

  subcommands:
    evaluate   pure policy evaluation for n = 1, 10, 1,000, 1,000,000 items vs a min/max loop,
               and peak memory at n = 1,000,000
    batch      `offline-ttl evaluate --batch` on 1,000,000 lines vs reading and splitting them
    peer       checkEligibility() vs python-diskcache (SQLite synchronous=FULL) vs
               pwrite+fdatasync, in one directory; creates .build/bench-venv when missing
    growth     checkEligibility() from 1 to 100,000 items, and evaluation vs n
    mark       clock-mark store observation latency and throughput
    gate       checkEligibility() latency for 1, 1,000 and 100,000 items
    floor      a boot-clock reading vs its raw system calls; the floor layer vs the mark rule
    async      checkEligibilityAsync() vs checkEligibility(): the cost of the async hop
    seal       a sealed store vs the same unsealed one: repeated check, 1 MiB read, sign-in
    read       `offline-ttl read` and `read --json` of a 512 MiB item vs cat: MB/s, peak RSS
    tpm        a TPM 2.0 clock reading (swtpm) and what it adds to checkEligibility()
               (only in a build with the TPM trait)
    all        every subcommand above, in that order, then one line per target of issue 15
               (figure, floor, ratio, target, met or missed)

  options:
    --json     print one JSON object per figure (JSON Lines) on stdout; remarks go to stderr
    --help     print this help and exit
  Subcommands take further options; see `offline-ttl-bench <subcommand> --help`.
  """

/// Runs one subcommand; `arguments` are the words after its name, `--json` removed.
typealias BenchSubcommand = (_ arguments: [String], _ json: Bool) throws -> Void

/// The subcommands in the order `all` runs them. `nil` means not built yet.
let subcommands: [(name: String, run: BenchSubcommand?)] =
  [
    ("evaluate", EvaluationBenchmark.run),
    ("batch", BatchBenchmark.run),
    ("peer", PeerBenchmark.run),
    ("growth", GrowthBenchmark.run),
    ("mark", MarkBenchmark.run),
    ("gate", GateBenchmark.run),
    ("floor", FloorBenchmark.run),
    ("async", AsyncHopBenchmark.run),
    ("seal", SealBenchmark.run),
    ("read", ReadBenchmark.run),
  ] + tpmSubcommands

/// `tpm`, in a build with the TPM trait.
var tpmSubcommands: [(name: String, run: BenchSubcommand?)] {
  #if TPM
    [("tpm", TPMBenchmark.run)]
  #else
    []
  #endif
}

func fail(_ error: any Error, usageHint: Bool) -> Never {
  let message = (error as? BenchError)?.message ?? "\(error)"
  var text = "error: \(message)\n"
  if usageHint { text += usage + "\n" }
  FileHandle.standardError.write(Data(text.utf8))
  BenchProcess.emptyTrashInBackground()
  exit(usageHint ? 64 : 1)
}

func runOne(_ name: String, _ run: BenchSubcommand?, _ arguments: [String], json: Bool) throws {
  guard let run else {
    throw BenchError.failed(
      "'\(name)' is not built yet (no figure is printed rather than a fake one)")
  }
  try run(arguments, json)
}

var words = Array(CommandLine.arguments.dropFirst())
let json = words.contains("--json")
words.removeAll { $0 == "--json" }

guard let command = words.first, command != "--help", command != "-h", command != "help" else {
  if words.isEmpty {
    fail(BenchError.usage("missing subcommand"), usageHint: true)
  }
  print(usage)
  exit(0)
}
let rest = Array(words.dropFirst())

do {
  switch command {
  case MemoryProbe.subcommand:
    try MemoryProbe.run(arguments: rest)
  case SyncProbe.subcommand:
    try SyncProbe.run(arguments: rest)
  case "all":
    if rest.contains("--help") {
      print("usage: offline-ttl-bench all [--json] [--quick]\n\nRuns every subcommand in order.")
      exit(0)
    }
    let passOn = rest.filter { $0 == "--quick" }
    guard passOn.count == rest.count else {
      throw BenchError.usage("'all' accepts only --json and --quick")
    }
    var failures: [String] = []
    let started = BenchClock.now()
    for (name, run) in subcommands {
      let sectionStart = BenchClock.now()
      do {
        try runOne(name, run, passOn, json: json)
      } catch let error as BenchError where !error.isUsage {
        FileHandle.standardError.write(Data("error: \(name): \(error.message)\n".utf8))
        failures.append(name)
      }
      let seconds = Double(BenchClock.now() - sectionStart) / 1e9
      FileHandle.standardError.write(
        Data("-- \(name): \(String(format: "%.1f", seconds)) s\n".utf8))
    }
    IssueTarget.printSummary(json: json)
    let total = Double(BenchClock.now() - started) / 1e9
    FileHandle.standardError.write(Data("-- all: \(String(format: "%.1f", total)) s\n".utf8))
    if !failures.isEmpty {
      FileHandle.standardError.write(
        Data("error: not measured: \(failures.joined(separator: ", "))\n".utf8))
      BenchProcess.emptyTrashInBackground()
      exit(1)
    }
  default:
    guard let entry = subcommands.first(where: { $0.name == command }) else {
      throw BenchError.usage("unknown subcommand '\(command)'")
    }
    try runOne(entry.name, entry.run, rest, json: json)
  }
  BenchProcess.emptyTrashInBackground()
} catch let error as BenchError {
  fail(error, usageHint: error.isUsage)
} catch {
  fail(error, usageHint: false)
}
