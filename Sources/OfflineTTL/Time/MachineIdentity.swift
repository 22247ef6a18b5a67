import Foundation
import Synchronization

/// The identity of the machine a store is used on: a 128-bit id that stays the same across
/// reboots and differs between installations (systemd's `/etc/machine-id`, `machine-id(5)`).
///
/// The mark record is bound to it at each online sign-in, so that evidence of one machine (its
/// boot ids and uptimes, which drive the boot-clock floor) is never judged on another
/// (<doc:Rules#One-user-one-device>).
public struct MachineID: Sendable, Hashable, CustomStringConvertible {
  /// The first 8 bytes of the id, big-endian (its first 16 hex digits).
  public let high: UInt64
  /// The last 8 bytes, big-endian (its last 16 hex digits).
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

  /// Parses the text of a `machine-id(5)` file: exactly 32 hexadecimal digits (either case),
  /// optionally followed by one newline, and not all zero. Anything else (empty, the word
  /// `uninitialized`, a UUID with hyphens, other lengths) is `nil`.
  ///
  /// - Parameter text: The file's contents.
  public init?(machineIDText text: some StringProtocol) {
    var digits = Substring(text)
    if digits.hasSuffix("\n") { digits = digits.dropLast() }
    let isHexDigit: (UInt8) -> Bool = { byte in
      (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
    guard digits.utf8.count == 32, digits.utf8.allSatisfy(isHexDigit),
      let high = UInt64(digits.prefix(16), radix: 16),
      let low = UInt64(digits.suffix(16), radix: 16),
      high != 0 || low != 0
    else { return nil }
    self.init(high: high, low: low)
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

/// Where a ``Clocks`` reads this machine's identity (``MachineID``).
public protocol MachineIdentity: Sendable {
  /// This machine's id now, or `nil` when it cannot be read.
  ///
  /// - Returns: The id, or `nil`.
  func current() -> MachineID?
}

/// The system's machine id: `/etc/machine-id`, else `/var/lib/dbus/machine-id` (the D-Bus copy
/// that systems without systemd keep); `nil` when neither holds a valid id.
///
/// Each file is opened non-blocking (a FIFO never makes a check wait) and must be a regular file
/// of at most 4 KiB; a symbolic link is resolved once to its target, which is then opened
/// without following. With the default paths the id is read once per process and then reused
/// (a machine's id does not change under a running process; this saves a file read on every
/// decision); with other paths (tests) it is read at each call.
public struct SystemMachineIdentity: MachineIdentity {
  /// The files tried, in order.
  public let paths: [String]

  /// The default files: `/etc/machine-id`, then `/var/lib/dbus/machine-id`.
  public static let defaultPaths = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

  /// Creates the source.
  ///
  /// - Parameter paths: The files to try, in order; the system's by default (tests pass
  ///   others).
  public init(paths: [String] = SystemMachineIdentity.defaultPaths) {
    self.paths = paths
  }

  /// See ``MachineIdentity/current()``.
  ///
  /// - Complexity: At most two small file reads per path (none once the system's id is
  ///   cached).
  public func current() -> MachineID? {
    guard paths == Self.defaultPaths else { return Self.read(paths) }
    if let cached = Self.cached.withLock({ $0 }) { return cached }
    let id = Self.read(paths)
    Self.cached.withLock { $0 = id }
    return id
  }

  /// The system's id, once read; `nil` (and read again next time) while unreadable.
  private static let cached = Mutex<MachineID?>(nil)

  private static func read(_ paths: [String]) -> MachineID? {
    for path in paths {
      if let id = Self.read(path) ?? Self.read(resolvingLinkOf: path) { return id }
    }
    return nil
  }

  private static func read(resolvingLinkOf path: String) -> MachineID? {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return target == path ? nil : read(target)
  }

  /// The id in one file, or `nil`.
  private static func read(_ path: String) -> MachineID? {
    let calls = Syscalls()
    guard let fd = try? calls.open(path, [.readOnly, .nonBlocking]) else { return nil }
    defer { calls.closeIgnoringErrors(fd) }
    guard let info = try? calls.fstat(fd), info.kind == .regular, info.size <= 4096 else {
      return nil
    }
    var buffer = [UInt8](repeating: 0, count: Int(info.size))
    guard let filled = try? calls.preadAll(fd, into: &buffer, at: 0) else { return nil }
    return MachineID(machineIDText: String(decoding: buffer[0..<filled], as: UTF8.self))
  }
}

/// A fixed machine id, or none (for tests and for programs that know their machine otherwise).
public struct ManualMachineIdentity: MachineIdentity {
  /// The id every call returns.
  public let id: MachineID?

  /// Creates the source.
  ///
  /// - Parameter id: The id to return; `nil` for a machine whose id cannot be read.
  public init(_ id: MachineID?) {
    self.id = id
  }

  /// See ``MachineIdentity/current()``.
  public func current() -> MachineID? { id }
}
