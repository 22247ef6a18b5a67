import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The wall clock a child of ``SimulatedMachine`` sees, through libfaketime (only the child is
/// faked; its boot clock stays real: `FAKETIME_DONT_FAKE_MONOTONIC=1`).
enum SimulatedWallClock {
  /// The real wall clock (no libfaketime).
  case real
  /// The real wall clock moved by a whole number of seconds, still ticking.
  case offset(seconds: Int64)
  /// The wall clock frozen at a whole second since the Unix epoch.
  case frozen(atSecondsSinceEpoch: Int64)
}

/// The boot a child of ``SimulatedMachine`` runs in, through Linux namespaces (`unshare`).
enum SimulatedBoot {
  /// This boot, as it is.
  case current
  /// This boot with its boot clock moved forward (a time namespace): real time that passed
  /// while the machine ran, without waiting for it.
  case ahead(seconds: Int64)
  /// Another boot: another boot id (a bind mount over `/proc/sys/kernel/random/boot_id` in a
  /// mount namespace) and a boot clock that restarted (a time namespace's offset).
  case rebooted(SimulatedReboot)
}

/// One simulated reboot: a boot id file and the boot-clock offset that makes the uptime about
/// `uptime` seconds when it was made. Reuse one value for every run "in" that boot.
struct SimulatedReboot {
  /// The file bind-mounted over the boot id.
  let bootIDFile: String
  /// The new boot id.
  let bootID: String
  /// The time namespace's `--boottime` offset, in seconds (negative).
  let boottimeOffset: Int64

  /// Writes a new boot id into `directory` and computes the offset from `/proc/uptime`.
  ///
  /// - Parameters:
  ///   - directory: Where the boot id file goes.
  ///   - uptime: The uptime the new boot starts at, in seconds.
  /// - Throws: When the file cannot be written or `/proc/uptime` read.
  init(in directory: String, uptime: Int64 = 5) throws {
    bootID = UUID().uuidString.lowercased()
    bootIDFile = directory + "/boot_id-" + bootID
    try Data((bootID + "\n").utf8).write(to: URL(fileURLWithPath: bootIDFile))
    let text = try String(contentsOfFile: "/proc/uptime", encoding: .utf8)
    let seconds = try #require(text.split(separator: ".").first.flatMap { Int64($0) }, "\(text)")
    boottimeOffset = uptime - seconds
  }
}

/// Runs the built `offline-ttl` as if on a machine whose wall clock, boot clock and boot id the
/// test chooses: libfaketime for the wall clock, `unshare` (mount and time namespaces) for the
/// boot id and the boot clock. Each child runs under a timeout and is killed by its pid
/// (`unshare --kill-child` takes its forked child with it).
struct SimulatedMachine {
  /// libfaketime's path, when installed.
  static let fakeTime = FakeTime.library

  /// Whether `unshare` can make mount and time namespaces here and bind-mount a boot id (root,
  /// or an unprivileged user namespace with `-r`), probed once.
  static let namespacesWork: Bool = {
    guard let unshare = toolPath("unshare"),
      let scratch = try? TemporaryStoreDirectory(prefix: "offline-ttl-probe")
    else {
      return false
    }
    defer { scratch.remove() }
    let file = scratch.path + "/boot_id"
    guard (try? Data("probe\n".utf8).write(to: URL(fileURLWithPath: file))) != nil else {
      return false
    }
    let probe = try? BinaryRunner(path: unshare).run(
      userNamespace + [
        "-m", "-T", "--boottime=1", "--kill-child", "sh", "-c",
        "mount --bind \"$1\" /proc/sys/kernel/random/boot_id"
          + " && test \"$(cat /proc/sys/kernel/random/boot_id)\" = probe",
        "sh", file,
      ])
    return probe?.exitCode == 0
  }()

  /// Why a scenario that needs the namespaces is skipped.
  static let namespacesMissing: Comment = Comment(
    rawValue: "unshare (util-linux) cannot make mount and time namespaces here (needs root, or user"
      + " namespaces for -r)")

  /// `-r` when not root: an unprivileged user namespace in which the mounts are allowed.
  private static var userNamespace: [String] { getuid() == 0 ? [] : ["-r"] }

  /// The command put in front of the binary for `boot`.
  static func launcher(_ boot: SimulatedBoot) -> [String] {
    switch boot {
    case .current:
      return []
    case .ahead(let seconds):
      return ["unshare"] + userNamespace + ["-T", "--boottime=\(seconds)", "--kill-child"]
    case .rebooted(let reboot):
      return ["unshare"] + userNamespace + [
        "-m", "-T", "--boottime=\(reboot.boottimeOffset)", "--kill-child", "sh", "-c",
        "mount --bind \"$1\" /proc/sys/kernel/random/boot_id && shift && exec \"$@\"", "sh",
        reboot.bootIDFile,
      ]
    }
  }

  /// The libfaketime environment for `wall`.
  static func environment(_ wall: SimulatedWallClock) throws -> [String: String] {
    let base = [
      "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1", "TZ": "UTC",
    ]
    switch wall {
    case .real:
      return [:]
    case .offset(let seconds):
      let library = try #require(fakeTime, FakeTime.missing)
      return base.merging(
        ["LD_PRELOAD": library, "FAKETIME": seconds < 0 ? "\(seconds)" : "+\(seconds)"]
      ) { $1 }
    case .frozen(let seconds):
      let library = try #require(fakeTime, FakeTime.missing)
      return FakeTime.frozenWallClock(atSecondsSinceEpoch: seconds, library: library)
    }
  }

  /// Runs `offline-ttl arguments` with the wall clock `wall` in the boot `boot`, killed after
  /// ``BinaryRunner/hangBound``.
  ///
  /// - Returns: The result; a run that timed out is recorded as an issue.
  static func run(
    _ arguments: [String], wall: SimulatedWallClock = .real, boot: SimulatedBoot = .current
  ) throws -> BinaryResult {
    let result = try BinaryRunner().run(
      arguments, environment: environment(wall), launcher: launcher(boot))
    #expect(!result.timedOut, "\(arguments) outlived \(BinaryRunner.hangBound) and was killed")
    return result
  }

  /// The real wall clock now, in whole seconds since the Unix epoch (rounded down).
  static func realSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
