import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The Linux boot clock: `CLOCK_BOOTTIME` (nanoseconds since boot, counting suspend; it cannot be
/// set) and the boot id in `/proc/sys/kernel/random/boot_id` (a new random UUID at every boot).
///
/// Every Linux specific of the floor lives in this file, so an Apple implementation
/// (`mach_continuous_time` and the `kern.bootsessionuuid` sysctl) can be added beside it without
/// touching the policy. On other platforms the type exists but ``now()`` returns `nil`.
///
/// `CLOCK_BOOTTIME` is read at each call. The kernel's boot id is read once per
/// process and then reused: it names the boot, and no process outlives the boot it started in, so
/// the value cannot change under a running process (this saves an `open`/`pread`/`close` of a
/// `/proc` file, about 7 µs, on every decision). Any other ``bootIDPath`` (tests) is read at each
/// call. The one exception is a process checkpointed and restored on another boot (CRIU): it keeps
/// the old id, so its readings mislabel the new boot. That can only make decisions stricter, never
/// grant `fresh`: the floor only adds refusals and raises the time age is judged from, so the
/// worst case is a refusal (`boot_clock_inconsistent` or an overstated floor) until the next
/// online sign-in re-anchors. Sources: `clock_gettime(2)` for `CLOCK_BOOTTIME`, `random(4)` for `boot_id`.
public struct LinuxBootClock: BootClock {
  /// The file the boot id is read from.
  public let bootIDPath: String

  /// The kernel's boot id file, `/proc/sys/kernel/random/boot_id`.
  public static let kernelBootIDPath = "/proc/sys/kernel/random/boot_id"

  /// Creates the clock.
  ///
  /// - Parameter bootIDPath: Where to read the boot id; the default is the kernel's file. Tests
  ///   point it elsewhere to see an unreadable or malformed id.
  public init(bootIDPath: String = LinuxBootClock.kernelBootIDPath) {
    self.bootIDPath = bootIDPath
  }

  /// Reads the boot id, then `CLOCK_BOOTTIME`.
  ///
  /// - Returns: The reading, or `nil` off Linux, when the boot id file cannot be read, is not a
  ///   regular file (a FIFO or socket bound over it is never waited on) or does not hold a
  ///   nonzero UUID, or when `clock_gettime` fails.
  /// - Complexity: One `clock_gettime`; the first call in a process (and every call for another
  ///   ``bootIDPath``) also reads the boot id file through the package's syscall seam.
  public func now() -> BootClockReading? {
    #if os(Linux)
      guard let id = bootID() else { return nil }
      var spec = timespec()
      guard clock_gettime(CLOCK_BOOTTIME, &spec) == 0, spec.tv_sec >= 0, spec.tv_nsec >= 0 else {
        return nil
      }
      let since = Duration.seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
      return BootClockReading(bootID: id, sinceBoot: since)
    #else
      return nil
    #endif
  }

  #if os(Linux)
    /// The kernel's boot id, read on first use; `nil` (and retried next time) when unreadable.
    private static let kernelBootID = Mutex<BootID?>(nil)

    /// The boot id from ``bootIDPath``: once per process for the kernel's file, else each call.
    private func bootID() -> BootID? {
      guard bootIDPath == Self.kernelBootIDPath else { return Self.parseBootID(at: bootIDPath) }
      if let cached = Self.kernelBootID.withLock({ $0 }) { return cached }
      let id = Self.parseBootID(at: bootIDPath)
      Self.kernelBootID.withLock { $0 = id }
      return id
    }

    /// A nonzero UUID read from a file, or `nil`.
    private static func parseBootID(at path: String) -> BootID? {
      guard let text = readSmallFile(path), let id = BootID(uuidString: text), id != .none else {
        return nil
      }
      return id
    }

    /// Reads at most 127 bytes of a file as UTF-8 through the syscall seam, so that it cannot
    /// block (`O_NONBLOCK`; a FIFO, socket, device or directory in its place is refused, as is a
    /// symbolic link); `nil` on any failure, as for a malformed id.
    private static func readSmallFile(_ path: String) -> String? {
      guard let bytes = try? Syscalls().readSystemFile(path, limit: 127) else { return nil }
      return String(decoding: bytes, as: UTF8.self)
    }
  #endif
}

extension BootClock where Self == LinuxBootClock {
  /// The Linux boot clock (its readings are `nil` on other platforms).
  public static var linux: LinuxBootClock { LinuxBootClock() }
}
