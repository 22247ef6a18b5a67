import Foundation
import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `gate`: `OfflineAccessGate.checkEligibility()` on real files (`DirectoryCacheStore` +
/// `FileClockMarkStore`) for 1, 1,000 and 100,000 items, beside the mark observation alone (the
/// unavoidable part of a check: the clock must be observed through the mark store) measured in
/// the same run and directory; and the online session's batched commit beside writing the same
/// files with no sync at all.
enum GateBenchmark {
  static let help = """
    usage: offline-ttl-bench gate [--json] [--quick]

    checkEligibility() latency (p50, p99 in the note) on caches of 1, 1,000 and 100,000 items,
    each written in one online session:
      writing check     markResolution 0: every check makes the advanced mark durable;
                        floor: FileClockMarkStore.observe() writing, same run, same directory
      repeated check    default markResolution (1 s): the mark is read, not rewritten;
                        floor: FileClockMarkStore.observe() within the resolution
    and the 100,000-item check beside the 1-item check (target: ratio <= 2).
    Then, in 5 interleaved rounds (medians): an atomic sign-in of 10,000 items and an
    online-session commit of 10,000 items (each one syncfs + a constant number of fsyncs),
    beside writing the same 10,000 files with no sync, and the sign-in beside the session
    commit (target: ratio <= 1.2); and per item beside 1,000 files with one fsync each.
      --quick         fewer checks; 10,000 items instead of 100,000 for the largest cache;
                      one commit round of 2,000 items
      --only <part>   checks or commit: run one part only
    """

  static func run(arguments: [String], json: Bool) throws {
    guard let options = try BenchArguments.parse(arguments, help: help, options: ["only"]) else {
      return
    }
    let quick = options.flag("quick")
    let only = options.value("only")
    guard only == nil || only == "checks" || only == "commit" else {
      throw BenchError.usage("--only takes checks or commit")
    }
    let report = BenchReport(section: "gate", json: json)
    let directory = try BenchProcess.workDirectory("gate")
    defer { BenchProcess.discard(directory) }

    if only != "commit" { try checks(report, directory: directory, quick: quick) }
    if only != "checks" { try commit(report, directory: directory, quick: quick) }
  }

  static func checks(_ report: BenchReport, directory: URL, quick: Bool) throws {
    let writingRuns = quick ? 100 : 200
    let repeatedRuns = quick ? 1_000 : 5_000
    let counts = [1, 1_000, quick ? 10_000 : 100_000]
    report.heading("checkEligibility() on real files vs the mark observation alone")
    var firstWriting = 0.0
    var firstRepeated = 0.0
    for items in counts {
      let label = BenchFormat.grouped(Int64(items))
      let store = directory.appendingPathComponent("items-\(items)").path
      let floorStore = directory.appendingPathComponent("mark-only-\(items)").path
      var setup: UInt64 = 0
      setup = try BenchClock.time { try fill(store, items: items) }
      let writing = try gate(store, resolution: .zero)
      let repeated = try gate(store, resolution: .seconds(1))
      let marks = FileClockMarkStore(atPath: floorStore)
      _ = try marks.resetAfterOnlineSignIn(now: SystemWallClock().now())
      let clock = SystemWallClock()

      let w = try BenchClock.paired(
        writingRuns,
        measured: { try expectFresh(writing.checkEligibility()) },
        floor: { _ = try marks.observe(ClockObservation(wall: clock.now())) })
      let r = try BenchClock.paired(
        repeatedRuns,
        measured: { try expectFresh(repeated.checkEligibility()) },
        floor: {
          _ = try marks.observe(ClockObservation(wall: clock.now()), resolution: .seconds(1))
        })
      let wP50 = BenchStats.median(w.measured)
      let rP50 = BenchStats.median(r.measured)
      if items == 1 {
        firstWriting = wP50
        firstRepeated = rP50
      }
      report.record(
        "writing check p50, \(label) items", wP50, unit: "ns",
        floor: ("mark observe, writing", BenchStats.median(w.floor)),
        note: "p99 \(BenchFormat.number(BenchStats.quantile(w.measured, 0.99))) ns; setup "
          + "\(BenchFormat.number(Double(setup) / 1e9)) s")
      report.record(
        "repeated check p50, \(label) items", rP50, unit: "ns",
        floor: ("mark observe, no write", BenchStats.median(r.floor)),
        note: "p99 \(BenchFormat.number(BenchStats.quantile(r.measured, 0.99))) ns")
      if items == counts.last {
        for (kind, value, first) in [
          ("writing", wP50, firstWriting), ("repeated", rP50, firstRepeated),
        ] {
          report.record(
            "\(kind) check, \(label) vs 1 item", value, unit: "ns",
            floor: ("\(kind) check, 1 item", first), target: .ratioAtMost(2))
        }
      }
      BenchProcess.discard(URL(fileURLWithPath: store))
    }

  }

  static func commit(_ report: BenchReport, directory: URL, quick: Bool) throws {
    report.heading("sign-in and online session: one durable commit of many items")
    let batch = quick ? 2_000 : 10_000
    let rounds = quick ? 1 : 5
    // Interleaved rounds (sign-in, floor, session commit), each in a fresh directory, so that
    // disk noise from other processes hits all three alike; the medians are recorded.
    var signIns: [UInt64] = []
    var floors: [UInt64] = []
    var commits: [UInt64] = []
    for round in 0..<rounds {
      let signInStore = directory.appendingPathComponent("sign-in-\(round)")
      signIns.append(try BenchClock.time { try signIn(signInStore.path, items: batch) })
      let plain = directory.appendingPathComponent("plain-\(round)")
      try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
      floors.append(
        try BenchClock.time { try writeFiles(plain.path, count: batch, syncEach: false) })
      let commitStore = directory.appendingPathComponent("commit-\(round)")
      commits.append(try BenchClock.time { try fill(commitStore.path, items: batch) })
      for done in [signInStore, plain, commitStore] { BenchProcess.discard(done) }
    }
    let signInMedian = BenchStats.median(signIns)
    let noSync = BenchStats.median(floors)
    let commit = BenchStats.median(commits)
    let perRound = (0..<rounds).map { round in
      String(format: "%.2f", Double(signIns[round]) / Double(max(floors[round], 1)))
    }
    let floorName = "same files written and renamed, no sync"
    report.record(
      "atomic sign-in of \(BenchFormat.grouped(Int64(batch))) items, median of \(rounds)",
      signInMedian / 1e6, unit: "ms", floor: (floorName, noSync / 1e6),
      note: "staged in next-<g>/, one syncfs, the mark reset as commit point, rolled forward;"
        + " per-round ratios \(perRound.joined(separator: ", "))")
    report.record(
      "commit \(BenchFormat.grouped(Int64(batch))) items (session), median of \(rounds)",
      commit / 1e6, unit: "ms", floor: (floorName, noSync / 1e6),
      target: .ratioAtMost(2),
      note: "the in-place commit of an online session: one syncfs and 5 fsyncs in all")
    report.record(
      "atomic sign-in vs the session's in-place commit", signInMedian / 1e6, unit: "ms",
      floor: ("commit of the same items in one session", commit / 1e6),
      target: .ratioAtMost(1.2))
    let fsyncEach = 1_000
    let perItem = directory.appendingPathComponent("fsync-each")
    try FileManager.default.createDirectory(at: perItem, withIntermediateDirectories: true)
    let eachSync = try BenchClock.time {
      try writeFiles(perItem.path, count: fsyncEach, syncEach: true)
    }
    report.record(
      "commit, per item", commit / Double(batch) / 1e3, unit: "us/item",
      floor: (
        "one fsync per file, per item", Double(eachSync) / Double(fsyncEach) / 1e3
      ),
      note: "the alternative this design avoids (measured on 1,000 files)")
  }

  /// One atomic sign-in on `path` writing `items` items of 64 bytes
  /// (``OfflineAccessGate/beginOnlineSession(writing:)``).
  static func signIn(_ path: String, items: Int) throws {
    let gate = try gate(path, resolution: .zero)
    let payload = Data(repeating: 0x5A, count: 64)
    var batch: [(CacheItemKey, Data)] = []
    batch.reserveCapacity(items)
    for index in 0..<items { batch.append((try CacheItemKey("item-\(index)"), payload)) }
    try gate.beginOnlineSession(writing: batch).close()
  }

  /// Signs in on `path` and writes `items` items of 64 bytes in one commit.
  static func fill(_ path: String, items: Int) throws {
    let gate = try gate(path, resolution: .zero)
    let session = try gate.beginOnlineSession()
    let payload = Data(repeating: 0x5A, count: 64)
    var batch: [(CacheItemKey, Data)] = []
    batch.reserveCapacity(items)
    for index in 0..<items { batch.append((try CacheItemKey("item-\(index)"), payload)) }
    try session.write(contentsOf: batch)
    session.close()
  }

  static func gate(_ path: String, resolution: Duration) throws -> OfflineAccessGate {
    OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: path), marks: FileClockMarkStore(atPath: path),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), markResolution: resolution))
  }

  static func expectFresh(_ decision: OfflineAccessDecision) throws {
    guard decision.isFresh else {
      throw BenchError.failed("a check was not fresh: \(decision.status) \(decision.reasons)")
    }
  }

  /// Writes `count` 92-byte files (an item's size on disk) with raw `open`/`write`/`close` in
  /// `directory/tmp` and renames each into `directory/items` (what an atomic per-item file
  /// cannot avoid), optionally `fsync`ing each: the floor of creating the same items.
  static func writeFiles(_ directory: String, count: Int, syncEach: Bool) throws {
    let bytes = [UInt8](repeating: 0x5A, count: 92)
    for sub in ["tmp", "items"] {
      try FileManager.default.createDirectory(
        atPath: directory + "/" + sub, withIntermediateDirectories: true)
    }
    for index in 0..<count {
      let path = directory + "/tmp/f\(index)"
      let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
      guard fd >= 0 else { throw BenchError.failed("cannot create \(path): errno \(errno)") }
      defer { _ = close(fd) }
      let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      guard written == bytes.count else { throw BenchError.failed("write \(path): errno \(errno)") }
      if syncEach, fsync(fd) != 0 { throw BenchError.failed("fsync \(path): errno \(errno)") }
      guard rename(path, directory + "/items/f\(index)") == 0 else {
        throw BenchError.failed("rename \(path): errno \(errno)")
      }
    }
  }
}
