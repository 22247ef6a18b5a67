#if TPM
  import Foundation
  import OfflineTTL
  import OfflineTTLTPM
  import OfflineTTLTestDoubles

  /// `tpm`: what a TPM 2.0 clock adds to a check. One `ESYSTPMClock.now()` (one
  /// `TPM2_ReadClock` on an open connection), the first reading of a process (connection and
  /// identity), and `checkEligibility()` with the TPM configured beside the same check without
  /// it, on real files; the readings a check makes are counted (the design: exactly one).
  enum TPMBenchmark {
    static let help = """
      usage: offline-ttl-bench tpm [--json] [--quick] [--tcti <tcti>]

      Against a software TPM (swtpm, started on a free loopback port and stopped after) unless
      --tcti names one (device:/dev/tpmrm0 for the hardware TPM; needs access to it):
        one ESYSTPMClock.now() (one TPM2_ReadClock) beside one LinuxBootClock.now()
        the first reading of a process (TCTI connection + identity: a primary key derivation)
        checkEligibility() with the TPM (markResolution 0: every check writes the mark) beside
        the same check without a TPM, same run, same directory; readings per check (target 1)
      A hardware TPM is slower than swtpm (a discrete TPM answers over SPI or LPC at a few MHz and
      runs its own slow processor; not measured here, this machine has none): the design keeps
      it to one reading per decision.
        --quick    fewer iterations (a smoke test; figures are noisier)
        --tcti     the TPM to measure instead of a new swtpm
      """

    static func run(arguments: [String], json: Bool) throws {
      let options = try BenchArguments(arguments, flags: ["quick", "help"], options: ["tcti"])
      if options.flag("help") {
        print(help)
        return
      }
      let quick = options.flag("quick")
      let report = BenchReport(section: "tpm", json: json)
      var swtpm: SwtpmProcess?
      let tcti: String
      if let given = options.value("tcti") {
        tcti = given
      } else {
        let started = try SwtpmProcess()
        swtpm = started
        tcti = started.tcti
        // One answered command before the figures: the TPM's own start-up is not measured
        // (as before, the first figure is this process's connection and identity).
        _ = try ESYSTPMClock(tcti: tcti).now()
      }
      defer { swtpm?.stop() }
      let directory = try BenchProcess.workDirectory("tpm")
      defer { BenchProcess.discard(directory) }

      report.heading("one TPM reading (\(swtpm == nil ? tcti : "swtpm"))")
      let first = try ESYSTPMClock(tcti: tcti)
      let opening = BenchClock.now()
      _ = try first.now()
      report.record(
        "first reading of a process (connect + identity)",
        Double(BenchClock.now() - opening) / 1e3, unit: "us",
        note: "once per process and connection; the command line pays it on every run")
      let clock = opaque(first)
      let boot = opaque(LinuxBootClock())
      let reads = quick ? 200 : 2_000
      var readSamples: [UInt64] = []
      var bootSamples: [UInt64] = []
      for _ in 0..<reads {
        readSamples.append(try BenchClock.time { blackHole(try clock.now()) })
        bootSamples.append(BenchClock.time { blackHole(boot.now()) })
      }
      report.record(
        "ESYSTPMClock.now() (TPM2_ReadClock)", BenchStats.median(readSamples) / 1e3, unit: "us",
        floor: ("LinuxBootClock.now()", BenchStats.median(bootSamples) / 1e3),
        note: "p99 \(BenchFormat.number(BenchStats.quantile(readSamples, 0.99) / 1e3)) us")

      report.heading("checkEligibility() with the TPM vs without (1 item, every check writes)")
      let counting = CountingTPMClock(clock)
      let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400), markResolution: .zero)
      func gate(_ name: String, tpm: (any TPMClock)?) throws -> OfflineAccessGate {
        let path = directory.appendingPathComponent(name).path
        let gate = OfflineAccessGate(
          cache: DirectoryCacheStore(atPath: path), marks: FileClockMarkStore(atPath: path),
          policy: policy, tpmClock: tpm)
        let session = try gate.beginOnlineSession(writing: [
          (CacheItemKey("token"), Data("benchmark".utf8))
        ])
        session.close()
        return gate
      }
      let withTPM = try gate("with-tpm", tpm: counting)
      let without = try gate("without-tpm", tpm: nil)
      let checks = quick ? 100 : 500
      var withSamples: [UInt64] = []
      var withoutSamples: [UInt64] = []
      var refused = 0
      let readsBefore = counting.reads
      for _ in 0..<checks {
        withSamples.append(
          BenchClock.time {
            let decision = withTPM.checkEligibility()
            if !decision.isFresh { refused += 1 }
          })
        withoutSamples.append(BenchClock.time { blackHole(without.checkEligibility()) })
      }
      guard refused == 0 else {
        throw BenchError.failed("\(refused) of \(checks) checks with the TPM were refused")
      }
      let withMedian = BenchStats.median(withSamples) / 1e3
      let withoutMedian = BenchStats.median(withoutSamples) / 1e3
      report.record(
        "checkEligibility() with the TPM", withMedian, unit: "us",
        floor: ("the same check without a TPM", withoutMedian),
        note: "adds \(BenchFormat.number(withMedian - withoutMedian)) us per check")
      let perCheck = Double(counting.reads - readsBefore) / Double(checks)
      report.record(
        "TPM readings per check", perCheck, unit: "readings", target: .valueAtMost(1.0),
        note: "one TPM2_ReadClock per decision, taken under the mark lock")
      report.note(
        "a hardware TPM is slower than swtpm (not measured here: this machine has none); a"
          + " decision reads it once (Clocks reads every source once per observation, under the"
          + " mark lock), and an opened reader's recheck reads it once per read")
    }
  }

  /// Counts the readings of a wrapped TPM clock.
  final class CountingTPMClock: TPMClock, @unchecked Sendable {
    // @unchecked: the benchmark reads it from one thread.
    private let wrapped: any TPMClock
    private(set) var reads = 0

    init(_ wrapped: any TPMClock) { self.wrapped = wrapped }

    func now() throws(TPMClockError) -> TPMClockReading {
      reads += 1
      return try wrapped.now()
    }
  }
#endif
