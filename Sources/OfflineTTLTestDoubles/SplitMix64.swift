/// A small seeded random number generator (SplitMix64), so that a randomized test or stress run
/// can be replayed from its printed seed.
///
/// The sequence depends only on its seed: one seed gives the same values on every machine
/// and in every process. Not for anything secret: it is predictable by design.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let step = Int64.random(in: -3_600...3_600, using: &random)  // the same on every run
/// ```
///
/// - Complexity: O(1) per value, 8 bytes of state.
/// - Source: Steele, Lea and Flood, "Fast splittable pseudorandom number generators" (OOPSLA 2014),
///   the constants of Java's `SplittableRandom`.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  /// The generator's state; the next value is derived from it.
  public var state: UInt64

  /// A generator whose sequence is fixed by `seed`.
  ///
  /// - Parameter seed: Any value; 0 is allowed.
  public init(seed: UInt64) { state = seed }

  /// The next value of the sequence.
  ///
  /// - Returns: 64 pseudorandom bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
