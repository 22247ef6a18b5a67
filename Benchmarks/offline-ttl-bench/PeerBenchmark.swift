import Foundation
import OfflineTTL

/// `peer`: our `checkEligibility()` beside python-diskcache making the same decision, and beside
/// the pwrite + fdatasync floor, all in one directory and one run, in interleaved rounds.
enum PeerBenchmark {
  static let help = """
    usage: offline-ttl-bench peer [--json] [--quick] [--rounds N] [--per-round N]

    In one work directory (.build/bench-work/peer) and interleaved rounds, times:
      floor      one in-place pwrite of 64 bytes + fdatasync
      diskcache  python-diskcache (SQLite WAL, synchronous=FULL): in one transaction read an
                 entry with an expiry and the stored observation time, store max(mark, now)
      writing    our checkEligibility() with markResolution 0 (every check writes the mark)
      repeated   our checkEligibility() with the default markResolution (1 s): repeated checks
                 within the resolution read and decide but do not write
    Targets: writing <= 0.8 x diskcache; repeated <= 0.1 x writing and <= 0.1 x diskcache.
    The first run creates .build/bench-venv and installs diskcache into it with pip.
      --quick         10 rounds of 20
      --rounds N      rounds (default 50)
      --per-round N   decisions per round and kind (default 30; repeated checks: 10 x N)
    """

  static func run(arguments: [String], json: Bool) throws {
    guard
      let options = try BenchArguments.parse(
        arguments, help: help, options: ["rounds", "per-round"])
    else { return }
    let quick = options.flag("quick")
    let rounds = try options.positiveInt("rounds", default: quick ? 10 : 50)
    let perRound = try options.positiveInt("per-round", default: quick ? 20 : 30)
    let report = BenchReport(section: "peer", json: json)
    report.heading("one decision, durably recorded: ours vs python-diskcache vs the floor")

    let directory = try BenchProcess.workDirectory("peer")
    defer { BenchProcess.discard(directory) }
    let floor = try DurabilityFloor(directory: directory.path)
    defer { floor.close() }
    let peer = try DiskcachePeer(
      directory: directory.appendingPathComponent("diskcache").path, note: report.note)
    defer { peer.finish() }
    guard peer.isSynchronousFull else {
      throw BenchError.failed("diskcache did not get synchronous=FULL: \(peer.description)")
    }
    report.note("work directory \(directory.path); \(peer.description)")
    var ours: GateCheck? = nil
    var oursMissing: BenchError? = nil
    do {
      ours = try GateCheck(directory: directory.appendingPathComponent("gate").path)
    } catch let error as BenchError {
      oursMissing = error
    }

    var floorSamples: [UInt64] = []
    var peerSamples: [UInt64] = []
    var writingSamples: [UInt64] = []
    var repeatedSamples: [UInt64] = []
    var observeSamples: [UInt64] = []
    // The mark store alone, writing every observation (as the gate's writing check does), in the
    // same rounds: the part of a writing check that is the store's.
    let markOnly = FileClockMarkStore(
      atPath: directory.appendingPathComponent("mark-only").path)
    let wall = SystemWallClock()
    let boot = LinuxBootClock()
    _ = try markOnly.resetAfterOnlineSignIn(ClockObservation(wall: wall.now(), boot: boot.now()))
    for _ in 0..<rounds {
      floorSamples += try floor.measure(count: perRound)
      peerSamples += try peer.time(perRound)
      for _ in 0..<perRound {
        observeSamples.append(
          try BenchClock.time {
            blackHole(try markOnly.observe(ClockObservation(wall: wall.now(), boot: boot.now())))
          })
      }
      if let ours {
        writingSamples += try ours.writingChecks(perRound)
        repeatedSamples += try ours.repeatedChecks(perRound * 10)
      }
    }

    let floorP50 = BenchStats.median(floorSamples)
    let peerP50 = BenchStats.median(peerSamples)
    let floorName = "pwrite+fdatasync p50"
    report.record("floor: pwrite 64 B + fdatasync p50", floorP50, unit: "ns")
    report.record(
      "floor: pwrite 64 B + fdatasync p99", BenchStats.quantile(floorSamples, 0.99), unit: "ns")
    report.record("diskcache decision p50", peerP50, unit: "ns", floor: (floorName, floorP50))
    let observeP50 = BenchStats.median(observeSamples)
    report.record(
      "mark store observe alone p50 (writing)", observeP50, unit: "ns",
      floor: (floorName, floorP50), note: "FileClockMarkStore, same rounds")
    report.record(
      "diskcache decision p99", BenchStats.quantile(peerSamples, 0.99), unit: "ns",
      floor: (floorName, floorP50))
    try StoreResolutionCheck.report(
      report, directory: directory.appendingPathComponent("store").path, rounds: rounds,
      perRound: perRound / 3 + 1)
    guard let ours else {
      throw oursMissing ?? BenchError.failed("our checkEligibility() is not built yet")
    }
    report.heading("ours: OfflineAccessGate.checkEligibility(), 1 item")
    let writingP50 = BenchStats.median(writingSamples)
    let repeatedP50 = BenchStats.median(repeatedSamples)
    report.record(
      "ours writing check p50 (markResolution 0)", writingP50, unit: "ns",
      floor: (floorName, floorP50))
    report.record(
      "ours writing check p99", BenchStats.quantile(writingSamples, 0.99), unit: "ns",
      floor: (floorName, floorP50))
    report.record(
      "ours writing check vs the mark store alone", writingP50, unit: "ns",
      floor: ("mark store observe alone p50", observeP50))
    report.record(
      "ours writing check vs diskcache", writingP50, unit: "ns",
      floor: ("diskcache decision p50", peerP50), target: .ratioAtMost(0.8))
    report.record(
      "ours repeated check p50 (within 1 s resolution)", repeatedP50, unit: "ns",
      floor: ("ours writing check p50", writingP50), target: .ratioAtMost(0.1),
      note: "write syscalls per check: repeated "
        + BenchFormat.number(ours.writesPerRepeatedCheck) + ", writing "
        + BenchFormat.number(ours.writesPerWritingCheck))
    report.record(
      "ours repeated check p99", BenchStats.quantile(repeatedSamples, 0.99), unit: "ns",
      floor: ("ours writing check p50", writingP50))
    report.record(
      "ours repeated check vs diskcache", repeatedP50, unit: "ns",
      floor: ("diskcache decision p50", peerP50), target: .ratioAtMost(0.1))
    // The repeated check's own floors, on the store it reads (descriptors opened once).
    let checkFloor = try RepeatedCheckFloor(
      directory: directory.appendingPathComponent("gate").path)
    let floorSamples2 = rounds * perRound * 10
    let readsP50 = BenchStats.median(checkFloor.reads(floorSamples2))
    let checksP50 = BenchStats.median(checkFloor.allChecks(floorSamples2))
    let watchedP50 = BenchStats.median(checkFloor.watchedChecks(floorSamples2))
    report.record(
      "floor: pread of the mark record (8 KiB) + pread of the index header (72 B), p50", readsP50,
      unit: "ns", note: "descriptors open, page cache warm: the two reads a repeated check needs")
    report.record(
      "floor: the re-checks' system calls (2 lstat, 6 fstatat, 2 flock, 2 pread, 2 clocks), p50",
      checksP50, unit: "ns", floor: ("two preads p50", readsP50),
      note: "what the kept-open summary and mark read call per full check, raw")
    report.record(
      "floor: the watched calls (1 poll of the inotify descriptor and the mount table, 1 geteuid, 2 clocks), p50",
      watchedP50, unit: "ns", floor: ("two preads p50", readsP50),
      note: "what a repeated check calls while the change watches report nothing, raw")
    let ratios: [(name: String, floor: (String, Double), target: Double)] = [
      ("ours repeated check vs its floor (the two reads)", ("two preads p50", readsP50), 2),
      ("ours repeated check vs the watched calls", ("watched calls p50", watchedP50), 2),
      (
        "ours repeated check vs a writing check (lock-free target)",
        ("ours writing check p50", writingP50), 0.02
      ),
    ]
    for ratio in ratios {
      report.record(
        ratio.name, repeatedP50, unit: "ns", floor: ratio.floor,
        target: .ratioAtMost(ratio.target))
    }
    report.note("load: \(BenchFormat.loadAverage())")
    let parts = try ours.repeatedCheckParts(rounds * perRound)
    let partName = "ours repeated check p50"
    report.note("where a repeated check's time goes (each part timed alone):")
    let summaryCallsP50 = BenchStats.median(checkFloor.summaryChecks(floorSamples2))
    let markCallsP50 = BenchStats.median(checkFloor.markChecks(floorSamples2))
    report.record(
      "  item summary (DirectoryCacheStore.summary, kept open)", BenchStats.median(parts.summary),
      unit: "ns", floor: (partName, repeatedP50))
    report.record(
      "  item summary vs the full check's system calls (lstat, 4 fstatat, pread), raw",
      BenchStats.median(parts.summary), unit: "ns", floor: ("raw p50", summaryCallsP50))
    report.record(
      "  boot-clock reading (LinuxBootClock.now)", BenchStats.median(parts.bootClock), unit: "ns",
      floor: (partName, repeatedP50))
    report.record(
      "  mark observe, no write (FileClockMarkStore)", BenchStats.median(parts.observe),
      unit: "ns", floor: (partName, repeatedP50), note: "includes its own boot-clock reading")
    report.record(
      "  mark observe vs the full check's system calls (lstat, 2 fstatat, 2 flock, pread), raw",
      BenchStats.median(parts.observe), unit: "ns", floor: ("raw p50", markCallsP50))
    report.record(
      "  building the decision (OfflineAccessDecision(policy:mark:items:))",
      BenchStats.median(try ours.decisionBuilds(floorSamples2)), unit: "ns",
      floor: (partName, repeatedP50), target: .valueAtMost(1_000),
      note: "the rules and the assembly over one repeated check's transition and summary")
    if AllocationProbe.valgrind != nil {
      report.record(
        "heap allocations per repeated check (valgrind memcheck)",
        try AllocationProbe.perRepeatedCheck(
          directory: directory.appendingPathComponent("memcheck").path),
        unit: "allocs", target: .valueAtMost(0.1),
        note: "1,100 vs 100 checks; the rest are checks that write as the mark passes 1 s")
    } else {
      report.note("valgrind is not installed: heap allocations per repeated check not counted")
    }
    try syncCounts(report, directory: directory.appendingPathComponent("strace").path)
  }

  /// Verifies with `strace -c` that a repeated check makes no write and no sync system call,
  /// while a writing check makes one sync (skipped with a note when strace is missing).
  static func syncCounts(_ report: BenchReport, directory: String) throws {
    guard SyncProbe.strace != nil else {
      report.note("strace is not installed: fdatasync counts not verified")
      return
    }
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let writing = try SyncProbe.perCheck(writing: true, checks: 20, directory: directory)
    let repeated = try SyncProbe.perCheck(writing: false, checks: 2_000, directory: directory)
    report.record(
      "fsync+fdatasync per writing check (strace)", writing.syncs, unit: "calls",
      note: "write calls per check \(BenchFormat.number(writing.writes))")
    report.record(
      "fsync+fdatasync per repeated check (strace)", repeated.syncs, unit: "calls",
      target: .valueAtMost(0),
      note: "write calls per check \(BenchFormat.number(repeated.writes))")
    // Every system call of a repeated check: with the stores' shared change watch quiet, one
    // poll, one lstat and one geteuid for both stores (the clocks are vDSO calls, not traced).
    let breakdown = repeated.byName.sorted { $0.key < $1.key }.map {
      "\($0.key) \(BenchFormat.number($0.value))"
    }
    report.record(
      "system calls per repeated check (strace)", repeated.total, unit: "calls",
      floor: ("two preads", 2), target: .valueAtMost(3.05),
      note: breakdown.joined(separator: ", ")
        + "; includes the first two checks' opening and full check, spread over 2,000")
  }
}
