#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Timing and optimizer barriers shared by every benchmark in this program.
enum BenchClock {
  /// `CLOCK_MONOTONIC` in nanoseconds (not the wall clock, which a user can move).
  @inline(__always)
  static func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
  }

  /// The nanoseconds `body` takes, once.
  @inline(__always)
  static func time(_ body: () throws -> Void) rethrows -> UInt64 {
    let start = now()
    try body()
    return now() &- start
  }

  /// Runs `body` `runs` times and returns each run's nanoseconds (a warm-up run is not counted).
  static func runs(_ runs: Int, warmUp: Bool = true, _ body: () throws -> Void) rethrows
    -> [UInt64]
  {
    if warmUp { try body() }
    var samples: [UInt64] = []
    samples.reserveCapacity(runs)
    for _ in 0..<runs { samples.append(try time(body)) }
    return samples
  }
}

extension BenchClock {
  /// Runs `measured` and `floor` alternately `runs` times each (after one warm-up of each), so
  /// that noise from other processes on the shared cores hits both alike. Returns each run's
  /// nanoseconds.
  static func paired(
    _ runs: Int, measured: () throws -> Void, floor: () throws -> Void
  ) rethrows -> (measured: [UInt64], floor: [UInt64]) {
    try measured()
    try floor()
    var a: [UInt64] = []
    var b: [UInt64] = []
    for _ in 0..<runs {
      a.append(try time(measured))
      b.append(try time(floor))
    }
    return (a, b)
  }
}

/// Consumes a value so the optimizer must compute it. Not inlined and not optimized, so the
/// compiler cannot see that it does nothing.
@inline(never) @_optimize(none)
func blackHole<T>(_ value: T) {}

/// Returns its argument through a call the optimizer cannot see through, so inputs are not
/// constant-folded and loop-invariant work is not hoisted.
@inline(never) @_optimize(none)
func opaque<T>(_ value: T) -> T { value }

/// Order statistics over samples.
enum BenchStats {
  /// The `q` quantile (0...1) by nearest rank; 0 for no samples.
  static func quantile<T: BinaryInteger>(_ samples: [T], _ q: Double) -> Double {
    guard !samples.isEmpty else { return 0 }
    let sorted = samples.sorted()
    let rank = Int((q * Double(sorted.count - 1)).rounded())
    return Double(sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)])
  }

  /// The median.
  static func median<T: BinaryInteger>(_ samples: [T]) -> Double { quantile(samples, 0.5) }

  /// The smallest sample; 0 for none.
  static func minimum<T: BinaryInteger>(_ samples: [T]) -> Double {
    samples.min().map { Double($0) } ?? 0
  }
}
