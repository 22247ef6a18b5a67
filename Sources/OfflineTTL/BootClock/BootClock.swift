/// The identity of one boot of the device: 16 bytes (on Linux, the UUID in
/// `/proc/sys/kernel/random/boot_id`). The all-zero value means "no boot recorded".
public struct BootID: Sendable, Hashable, CustomStringConvertible {
  /// The 16 bytes, as a tuple-free pair of integers (big-endian halves of the UUID).
  public let high: UInt64
  /// The low half.
  public let low: UInt64

  /// Creates a boot id from its two halves.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// The all-zero id: no boot recorded.
  public static let none = BootID(high: 0, low: 0)

  /// Parses the canonical UUID text `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (case-insensitive;
  /// surrounding white space is ignored). Returns `nil` for anything else.
  public init?(uuidString: some StringProtocol) {
    let hex = String(uuidString.filter { !$0.isWhitespace && $0 != "-" })
    guard hex.count == 32, let high = UInt64(hex.prefix(16), radix: 16),
      let low = UInt64(hex.suffix(16), radix: 16)
    else { return nil }
    self.init(high: high, low: low)
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
  public init(bootID: BootID, sinceBoot: Duration) {
    self.bootID = bootID
    self.sinceBoot = sinceBoot
  }
}

/// A clock the user cannot set, used to carry a lower bound on real time forward between
/// observations (DESIGN rule 9). Injected like ``WallClock``.
///
/// Conformers must be safe to call from any thread. The Linux implementation is
/// ``LinuxBootClock`` (`CLOCK_BOOTTIME` + `/proc/sys/kernel/random/boot_id`); an Apple one would
/// use `mach_continuous_time` and `kern.bootsessionuuid`. The policy sees only this protocol.
public protocol BootClock: Sendable {
  /// Reads the boot clock, or returns `nil` when this device has none (the floor is then skipped).
  func now() -> BootClockReading?
}
