import Foundation
import OfflineTTL

/// Verifies and measures that `FileClockMarkStore` honours the mark resolution: an observation
/// that would raise the stored mark by less than the resolution reads and decides but neither
/// writes nor syncs.
enum StoreResolutionCheck {
  /// What one run found.
  struct Result {
    /// Nanoseconds per writing observation (resolution 0).
    var writing: [UInt64] = []
    /// Nanoseconds per repeated observation (resolution 1 s).
    var repeated: [UInt64] = []
    /// Writing observations that reported `wrote`.
    var writingWrote = 0
    /// Repeated observations that reported `wrote`.
    var repeatedWrote = 0
    /// Write-type system calls per writing observation, if countable.
    var writesPerWriting: Double?
    /// Write-type system calls per repeated observation, if countable.
    var writesPerRepeated: Double?
  }

  /// Runs `rounds` rounds of `perRound` writing observations then `10 x perRound` repeated ones on
  /// a fresh store in `directory`, with the real wall clock.
  static func run(directory: String, rounds: Int, perRound: Int) throws -> Result {
    let store = FileClockMarkStore(atPath: directory)
    let clock = SystemWallClock()
    _ = try store.resetAfterOnlineSignIn(now: clock.now())
    var result = Result()
    var writingSyscalls = 0.0
    var repeatedSyscalls = 0.0
    var countable = true
    for _ in 0..<rounds {
      var samples: [UInt64] = []
      let perWriting = try ProcessIO.writesPerOperation(count: perRound) {
        for _ in 0..<perRound {
          var wrote = false
          samples.append(
            try BenchClock.time {
              wrote = try store.observe(ClockObservation(wall: clock.now()), resolution: .zero)
                .wrote
            })
          if wrote { result.writingWrote += 1 }
        }
      }
      result.writing += samples
      samples = []
      let repeatedCount = perRound * 10
      let perRepeated = try ProcessIO.writesPerOperation(count: repeatedCount) {
        for _ in 0..<repeatedCount {
          var wrote = false
          samples.append(
            try BenchClock.time {
              wrote = try store.observe(
                ClockObservation(wall: clock.now()), resolution: .seconds(1)
              ).wrote
            })
          if wrote { result.repeatedWrote += 1 }
        }
      }
      result.repeated += samples
      if let perWriting, let perRepeated {
        writingSyscalls += perWriting
        repeatedSyscalls += perRepeated
      } else {
        countable = false
      }
    }
    if countable {
      result.writesPerWriting = writingSyscalls / Double(rounds)
      result.writesPerRepeated = repeatedSyscalls / Double(rounds)
    }
    return result
  }

  /// Runs the check and reports it in `report`.
  static func report(_ report: BenchReport, directory: String, rounds: Int, perRound: Int) throws {
    report.heading("FileClockMarkStore honours markResolution (observe, real clock)")
    let result = try run(directory: directory, rounds: rounds, perRound: perRound)
    let writingP50 = BenchStats.median(result.writing)
    let repeatedP50 = BenchStats.median(result.repeated)
    let syscalls =
      if let writing = result.writesPerWriting, let repeated = result.writesPerRepeated {
        "write syscalls per observe: repeated \(BenchFormat.number(repeated)),"
          + " writing \(BenchFormat.number(writing))"
      } else { "write syscalls not countable (no /proc/self/io)" }
    report.record("store observe p50, markResolution 0", writingP50, unit: "ns")
    report.record(
      "store repeated observe p50, markResolution 1 s", repeatedP50, unit: "ns",
      floor: ("store observe p50, markResolution 0", writingP50), target: .ratioAtMost(0.1),
      note: syscalls)
    report.record(
      "store repeated observes that wrote", Double(result.repeatedWrote),
      unit: "of "
        + BenchFormat.grouped(Int64(result.repeated.count)),
      note: "writing observes that wrote: \(result.writingWrote) of \(result.writing.count)")
  }
}
