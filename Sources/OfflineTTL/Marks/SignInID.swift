import Foundation

/// The identity of one online sign-in: 128 random bits drawn when the sign-in stages its items.
///
/// A ``DirectoryCacheStore`` records it in the sign-in's staging (in a sealed store, inside what
/// the staged index authenticates), and the mark reset that commits the sign-in records the same
/// id in the clock-mark record. A staging is rolled forward, by readers and by the next sign-in,
/// only when its id is the one the committed record holds: a copy of a staging that never
/// committed, or one from another store or an older sign-in, is never made live
/// (<doc:Rules#Atomic-sign-in>).
public struct SignInID: Sendable, Hashable, CustomStringConvertible {
  /// The first 8 bytes, big-endian (the first 16 hex digits).
  public let high: UInt64
  /// The last 8 bytes, big-endian (the last 16 hex digits).
  public let low: UInt64

  /// Creates an id from its two halves.
  ///
  /// - Parameters:
  ///   - high: The first 8 bytes, big-endian.
  ///   - low: The last 8 bytes, big-endian.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// A new id from the system's random source (`getrandom(2)` through the standard library's
  /// `SystemRandomNumberGenerator`); this library never generates randomness of its own.
  ///
  /// - Returns: The id.
  public static func random() -> SignInID {
    var generator = SystemRandomNumberGenerator()
    return SignInID(high: generator.next(), low: generator.next())
  }

  /// An id from 16 bytes (big-endian halves); `nil` for any other count.
  ///
  /// - Parameter bytes: The 16 bytes.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 16 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (index, byte) in bytes.enumerated() {
      if index < 8 {
        high = high << 8 | UInt64(byte)
      } else {
        low = low << 8 | UInt64(byte)
      }
    }
    self.init(high: high, low: low)
  }

  /// The 16 bytes: ``high`` then ``low``, each big-endian.
  public var bytes: [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
      + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
  }

  /// The 32 lowercase hex digits.
  public var description: String {
    func hex(_ value: UInt64) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
    return hex(high) + hex(low)
  }
}

/// The id of the sign-in whose commit point is running on this thread: set by the item store
/// around its `commitPoint`
/// (``DirectoryCacheStore/commitSignIn(preparing:storedGeneration:commitPoint:)``), read by the
/// mark store's reset, which records it in the new record. Outside a sign-in's
/// commit point it is `nil`, and a reset records no id (no staging is then rolled forward
/// under that record).
enum SignInScope {
  @TaskLocal static var current: SignInID?
}
