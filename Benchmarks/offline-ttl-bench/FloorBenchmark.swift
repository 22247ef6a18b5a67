import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `floor`: what the boot-clock floor adds to each decision. A ``LinuxBootClock`` reading beside
/// the raw libc call it cannot avoid (`clock_gettime(CLOCK_BOOTTIME)`; the boot id is read once
/// per process), and the pure floor layer (carry forward + check + fold)
/// beside the eligibility rule's evaluation of one item.
enum FloorBenchmark {
  static let help = """
    usage: offline-ttl-bench floor [--json] [--quick]

    One LinuxBootClock.now() (boot id cached per process) beside a raw
    clock_gettime(CLOCK_BOOTTIME) (target: ratio <= 2.0),
    and the floor layer (BootClockFloor.advanced + BootClockFloorCheck + applied) beside the
    eligibility rule's evaluation of one item, which it follows in every decision.
      --quick    fewer iterations (a smoke test; figures are noisier)
    """

  static func run(arguments: [String], json: Bool) throws {
    guard let options = try BenchArguments.parse(arguments, help: help) else { return }
    let quick = options.flag("quick")
    let report = BenchReport(section: "floor", json: json)
    guard LinuxBootClock().now() != nil else {
      throw BenchError.failed("no boot clock on this system (LinuxBootClock returned nil)")
    }
    report.heading("one boot-clock reading vs the raw clock_gettime it makes")
    let reads = quick ? 20_000 : 200_000
    let runs = quick ? 3 : 7
    let clock = opaque(LinuxBootClock())
    let reading = BenchClock.paired(runs) {
      for _ in 0..<reads { blackHole(clock.now()) }
    } floor: {
      for _ in 0..<reads { blackHole(rawReading()) }
    }
    report.record(
      "LinuxBootClock.now()", BenchStats.median(reading.measured) / Double(reads), unit: "ns",
      floor: (
        "raw clock_gettime(CLOCK_BOOTTIME)", BenchStats.median(reading.floor) / Double(reads)
      ),
      target: .ratioAtMost(2.0))

    report.heading("the pure floor layer vs the eligibility rule's evaluation it follows (1 item)")
    let policy = try EligibilityPolicy(maxAge: .seconds(7 * 86_400))
    let base: Int64 = 1_700_000_000_000_000_000
    let boot = BootID(high: 1, low: 2)
    let record = opaque(
      ClockMarkRecord.afterOnlineSignIn(
        generation: 1,
        at: ClockObservation(
          wall: WallClockInstant(nanosecondsSinceEpoch: base),
          boot: BootClockReading(bootID: boot, sinceBoot: .seconds(100)))))
    let items = opaque(ItemTimeSummary(writtenAt: [WallClockInstant(nanosecondsSinceEpoch: base)]))
    let iterations = quick ? 200_000 : 2_000_000
    let layer = BenchClock.paired(runs) {
      for i in 0..<iterations {
        let now = WallClockInstant(nanosecondsSinceEpoch: base &+ 1_000 &+ Int64(i))
        let markRule = policy.evaluate(items, now: now, mark: record.mark)
        let next = record.observing(
          ClockObservation(
            wall: now,
            boot: BootClockReading(bootID: boot, sinceBoot: .seconds(100) + .nanoseconds(i))))
        let check = BootClockFloorCheck(record: next, wall: now, items: items, policy: policy)
        blackHole(check.applied(to: markRule))
      }
    } floor: {
      for i in 0..<iterations {
        let now = WallClockInstant(nanosecondsSinceEpoch: base &+ 1_000 &+ Int64(i))
        blackHole(policy.evaluate(items, now: now, mark: record.mark))
      }
    }
    report.record(
      "mark rule + observing + floor check", BenchStats.median(layer.measured) / Double(iterations),
      unit: "ns",
      floor: ("mark rule evaluate alone", BenchStats.median(layer.floor) / Double(iterations)),
      note: "both are far below one durable mark write (~150-600 us)")
  }

  /// The unavoidable work of one reading: `CLOCK_BOOTTIME` (the boot id is read once per
  /// process by ``LinuxBootClock``).
  @inline(never)
  static func rawReading() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_BOOTTIME, &spec)
    return Int(spec.tv_nsec)
  }
}
