/// The identity of one boot of the device: 16 bytes (on Linux, the UUID in
/// `/proc/sys/kernel/random/boot_id`). The all-zero value means "no boot recorded".
public struct BootID: Sendable, Hashable, CustomStringConvertible {
  /// The first 8 bytes of the UUID, big-endian (the first 16 hex digits).
  public let high: UInt64
  /// The last 8 bytes of the UUID, big-endian (the last 16 hex digits).
  public let low: UInt64

  /// Creates a boot id from its two halves.
  ///
  /// - Parameters:
  ///   - high: The first 8 bytes, big-endian.
  ///   - low: The last 8 bytes, big-endian.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// The all-zero id: no boot recorded.
  public static let none = BootID(high: 0, low: 0)

  /// Parses the canonical UUID text `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex digits in either
  /// case, hyphens exactly there; leading and trailing white space, such as the newline that ends
  /// `/proc/sys/kernel/random/boot_id`, is ignored). Returns `nil` for anything else.
  ///
  /// - Parameter uuidString: The text to parse.
  public init?(uuidString: some StringProtocol) {
    let bytes = Array(
      uuidString.utf8.drop(while: Self.isSpace).reversed().drop(while: Self.isSpace)
    )
    .reversed()
    guard bytes.count == 36 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    var digits = 0
    for (offset, byte) in bytes.enumerated() {
      if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
        guard byte == UInt8(ascii: "-") else { return nil }
        continue
      }
      guard let value = Self.hexValue(byte) else { return nil }
      if digits < 16 {
        high = high << 4 | UInt64(value)
      } else {
        low = low << 4 | UInt64(value)
      }
      digits += 1
    }
    self.init(high: high, low: low)
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || (0x09...0x0D).contains(byte)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// The canonical lowercase UUID text.
  public var description: String {
    let text =
      String(high, radix: 16).leftPadded(to: 16) + String(low, radix: 16).leftPadded(to: 16)
    let chars = Array(text)
    return String(chars[0..<8]) + "-" + String(chars[8..<12]) + "-" + String(chars[12..<16]) + "-"
      + String(chars[16..<20]) + "-" + String(chars[20..<32])
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}

/// One reading of the boot clock: which boot, and nanoseconds since it began (counting suspend).
public struct BootClockReading: Sendable, Hashable {
  /// The boot this reading belongs to.
  public let bootID: BootID
  /// Nanoseconds since that boot began, suspend included (`CLOCK_BOOTTIME`); never negative.
  public let sinceBoot: Duration

  /// Creates a reading.
  ///
  /// - Parameters:
  ///   - bootID: The boot.
  ///   - sinceBoot: Time since that boot began; a negative value marks a floor untrusted.
  public init(bootID: BootID, sinceBoot: Duration) {
    self.bootID = bootID
    self.sinceBoot = sinceBoot
  }
}

/// A clock the user cannot set, used to carry a lower bound on real time forward between
/// observations (<doc:Rules#Boot-clock-floor>). Injected like ``WallClock``.
///
/// Conformers must be safe to call from any thread. The Linux implementation is
/// ``LinuxBootClock`` (`CLOCK_BOOTTIME` + `/proc/sys/kernel/random/boot_id`); an Apple one would
/// use `mach_continuous_time` and `kern.bootsessionuuid`. The policy sees only this protocol.
public protocol BootClock: Sendable {
  /// Reads the boot clock.
  ///
  /// - Returns: The boot id and the time since that boot, or `nil` when this device has no
  ///   readable boot clock (the floor then does not advance).
  func now() -> BootClockReading?
}
