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

/// Why this machine's id could not be read although its file is there: a resource or access
/// error (`EMFILE`, `ENFILE`, `ENOMEM`, `EIO`, `EACCES`, ...). Not evidence of another machine:
/// a record bound to a machine is refused with `machine_id_unreadable`, carrying ``errno``, and
/// an online sign-in is not recorded (<doc:Rules#One-user-one-device>).
public struct MachineIDReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The file that could not be read.
  public let path: String
  /// The operating system's error number.
  public let errno: Int32

  /// Creates the error.
  ///
  /// - Parameters:
  ///   - path: The file that could not be read.
  ///   - errno: The operating system's error number.
  public init(path: String, errno: Int32) {
    self.path = path
    self.errno = errno
  }

  /// E.g. `"/etc/machine-id: EMFILE (Too many open files)"`.
  public var description: String {
    let errno = Errno(rawValue: self.errno)
    let name = errno.name.hasPrefix("errno ") ? "" : errno.name + " "
    return "\(path): \(name)(\(errno.message))"
  }
}

/// Where a ``Clocks`` reads this machine's identity (``MachineID``).
public protocol MachineIdentity: Sendable {
  /// This machine's id now, or `nil` when it cannot be read.
  ///
  /// - Returns: The id, or `nil`.
  func current() -> MachineID?

  /// This machine's id now; `nil` when the machine has none (no file, or no valid id in it).
  /// The default implementation returns ``current()``.
  ///
  /// - Returns: The id, or `nil`.
  /// - Throws: ``MachineIDReadError`` when a file is there but cannot be read (a resource or
  ///   access error): that is not evidence of another machine.
  func read() throws(MachineIDReadError) -> MachineID?
}

extension MachineIdentity {
  /// ``current()``: a source that cannot fail otherwise.
  public func read() throws(MachineIDReadError) -> MachineID? { current() }
}

/// The system's machine id: `/etc/machine-id`, else `/var/lib/dbus/machine-id` (the D-Bus copy
/// that systems without systemd keep); `nil` when neither holds a valid id.
///
/// Each file is opened so that it cannot block (`O_NONBLOCK`; a FIFO never makes a check wait)
/// and must be a regular file of at most 4 KiB; a symbolic link is resolved once to its target,
/// which is then opened without following. A file that is missing, or not a regular file, or
/// holds no valid id, passes to the next; a file that is there but cannot be read (`EMFILE`,
/// `EACCES`, `EIO`, ...) stops the search with a ``MachineIDReadError`` (``read()``), since its id
/// is unknown. With the default paths the id is read once per process and then reused (a
/// machine's id does not change under a running process; this saves a file read on every
/// decision); with other paths (tests) it is read at each call.
public struct SystemMachineIdentity: MachineIdentity {
  /// The files tried, in order.
  public let paths: [String]
  /// The seam the files are read through.
  private let system: Syscalls

  /// The default files: `/etc/machine-id`, then `/var/lib/dbus/machine-id`.
  public static let defaultPaths = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

  /// Creates the source.
  ///
  /// - Parameter paths: The files to try, in order; the system's by default (tests pass
  ///   others).
  public init(paths: [String] = SystemMachineIdentity.defaultPaths) {
    self.paths = paths
    self.system = Syscalls()
  }

  /// Creates the source reading through a test's fault plan (never cached).
  ///
  /// - Parameters:
  ///   - paths: The files to try, in order.
  ///   - faults: The plan every call consults.
  @_spi(Testing) public init(paths: [String], faults: SyscallFaultPlan?) {
    self.paths = paths
    self.system = Syscalls(faults: faults)
  }

  /// See ``MachineIdentity/current()``: `nil` also when an id cannot be read.
  ///
  /// - Complexity: At most two small file reads per path (none once the system's id is
  ///   cached).
  public func current() -> MachineID? { (try? read()) ?? nil }

  /// See ``MachineIdentity/read()``.
  ///
  /// - Complexity: At most two small file reads per path (none once the system's id is
  ///   cached).
  public func read() throws(MachineIDReadError) -> MachineID? {
    guard paths == Self.defaultPaths, system.faults == nil else {
      return try Self.read(paths, system)
    }
    if let cached = Self.cached.withLock({ $0 }) { return cached }
    let id = try Self.read(paths, system)
    Self.cached.withLock { $0 = id }
    return id
  }

  /// The system's id, once read; `nil` (and read again next time) while unreadable.
  private static let cached = Mutex<MachineID?>(nil)

  private static func read(_ paths: [String], _ system: Syscalls) throws(MachineIDReadError)
    -> MachineID?
  {
    for path in paths {
      if let id = try read(path, system) { return id }
      if let id = try read(resolvingLinkOf: path, system) { return id }
    }
    return nil
  }

  private static func read(resolvingLinkOf path: String, _ system: Syscalls)
    throws(MachineIDReadError) -> MachineID?
  {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return target == path ? nil : try read(target, system)
  }

  /// The id in one file; `nil` when the file is missing, a symbolic link (`ELOOP`: resolved by
  /// the caller), not a regular file, too large or not an id.
  private static func read(_ path: String, _ system: Syscalls) throws(MachineIDReadError)
    -> MachineID?
  {
    let bytes: [UInt8]
    do throws(SystemFileError) {
      bytes = try system.readSystemFile(path, limit: 4096)
    } catch {
      guard let errno = error.errno else { return nil }
      switch errno {
      case .noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinks: return nil
      default: throw MachineIDReadError(path: path, errno: errno.rawValue)
      }
    }
    return MachineID(machineIDText: String(decoding: bytes, as: UTF8.self))
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
