import Foundation
import OfflineTTL
import Testing

#if canImport(Glibc)
  import Glibc
#endif

#if SecretService
  import OfflineTTLSecretService
#endif

/// Shared helpers for the Secret Service tests: whether a private keyring is running, unique
/// application ids and lock directories, and child processes.
enum SecretServiceTestSupport {
  /// Set by `Scripts/test.sh` inside its private session bus with an unlocked keyring.
  static let readyVariable = "OFFLINE_TTL_SECRET_SERVICE_READY"

  /// Whether the tests that need the daemon can run (Swift Testing's `.enabled(if:)` skips the
  /// others, reported as skipped with ``keyringMissing``).
  static var keyringReady: Bool { ProcessInfo.processInfo.environment[readyVariable] == "1" }

  /// Why a test that needs the daemon was skipped.
  static let keyringMissing = Comment(
    rawValue: "needs a private gnome-keyring-daemon session (run Scripts/test.sh, which starts one "
      + "when libsecret, gnome-keyring and dbus are installed; Debian: gnome-keyring, dbus, "
      + "libsecret-1-dev)")

  /// The call limit of the stores these tests make: the library's 5 s default is for one
  /// call of a quiet desktop; a test machine loaded by parallel tests and builds can take longer
  /// to answer, and a bound that is reached there fails the test, not the code.
  static let callLimit: Duration = .seconds(60)
  /// The lock-file limit of the stores these tests make (the library's default is 30 s): many
  /// threads take turns holding the lock over D-Bus calls, each slow on a loaded machine.
  static let lockLimit: Duration = .seconds(600)

  /// Where libfaketime is installed by the Debian package `faketime`, or `nil`.
  ///
  /// Tests preload it themselves (`LD_PRELOAD`, `FAKETIME`) and never run the `faketime`
  /// wrapper: the wrapper creates a POSIX semaphore named after its process id and refuses to
  /// start ("sem_open: File exists") when a wrapper that was killed earlier with the same id left
  /// one behind, which a machine that reuses process ids across runs does.
  static let fakeTimeLibrary = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
  ].first { FileManager.default.fileExists(atPath: $0) }

  /// Whether `program` is on the PATH (for `.enabled(if:)`).
  static func has(_ program: String) -> Bool { which(program) != nil }

  /// A fresh application id, so parallel tests never share secrets.
  static func uniqueApplicationID(_ name: String = #function) -> String {
    let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    let safe = name.filter { $0.isLetter || $0.isNumber }
    return "org.offlinettl.tests.\(safe).\(suffix)"
  }

  /// A fresh directory under the system temporary directory, mode 0700.
  static func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "offline-ttl-secret-" + UUID().uuidString
    try FileManager.default.createDirectory(
      atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
  }

  /// A built product beside the test bundle (e.g. `offline-ttl-secret-probe`).
  static func product(_ name: String) -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    return bundle.deletingLastPathComponent().appendingPathComponent(name).path
  }

  /// What a finished child printed.
  struct Output {
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// The value of a `name=value` token on standard output.
    func value(_ name: String) -> String? {
      for token in standardOutput.split(whereSeparator: { $0 == " " || $0 == "\n" })
      where token.hasPrefix(name + "=") {
        return String(token.dropFirst(name.count + 1))
      }
      return nil
    }
  }

  /// A started child whose output goes to temporary files.
  struct Child {
    let pid: pid_t
    let outputPath: String
    let errorPath: String

    /// Waits for the child (at most `limit`, then kills it) and reads what it printed.
    func wait(limit: Duration = .seconds(120)) throws -> Output {
      var status: Int32 = 0
      var waited = Duration.zero
      while waitpid(pid, &status, WNOHANG) == 0 {
        if waited > limit {
          kill(pid, SIGKILL)
          _ = waitpid(pid, &status, 0)
          break
        }
        usleep(10_000)
        waited += .milliseconds(10)
      }
      defer {
        unlink(outputPath)
        unlink(errorPath)
      }
      let exited = status & 0x7f == 0
      return Output(
        status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f),
        standardOutput: Self.text(outputPath), standardError: Self.text(errorPath))
    }

    /// A file's text, read with read(2): Foundation's file readers leak their 4 KB buffer for an
    /// empty file in this toolchain, which LeakSanitizer reports.
    private static func text(_ path: String) -> String {
      let fd = open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { return "" }
      defer { close(fd) }
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
      }
      return String(decoding: bytes, as: UTF8.self)
    }
  }

  /// Starts a program with `environment` changes (`nil` removes a variable).
  ///
  /// Uses `posix_spawn` with an empty signal mask and default handlers: a child started by
  /// Foundation's `Process` from a test thread inherits blocked signals, and a `dbus-run-session`
  /// started that way cannot stop its bus. Output goes to files, so a daemon that keeps a
  /// descriptor open cannot hang the test.
  static func start(
    _ executable: String, _ arguments: [String], environment: [String: String?] = [:]
  ) throws -> Child {
    var merged = ProcessInfo.processInfo.environment
    for (name, value) in environment { merged[name] = value }
    let base = NSTemporaryDirectory() + "offline-ttl-child-" + UUID().uuidString
    let child = Child(pid: 0, outputPath: base + ".out", errorPath: base + ".err")

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, 1, child.outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(
      &actions, 2, child.errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var pid = pid_t()
    let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard status == 0 else {
      throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: executable])
    }
    return Child(pid: pid, outputPath: child.outputPath, errorPath: child.errorPath)
  }

  /// Runs a program to completion; see ``start(_:_:environment:)``.
  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String?] = [:]
  ) throws -> Output {
    try start(executable, arguments, environment: environment).wait()
  }

  /// Stores `text` as the secret with these attributes (replacing one), through `secret-tool`.
  ///
  /// - Throws: When `secret-tool` is missing (Debian: libsecret-tools) or fails.
  static func storeRawSecret(_ text: String, applicationID: String, kind: String, key: String)
    throws
  {
    guard let secretTool = which("secret-tool") else {
      throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "secret-tool"])
    }
    let input = NSTemporaryDirectory() + "offline-ttl-secret-input-" + UUID().uuidString
    try text.write(toFile: input, atomically: true, encoding: .utf8)
    defer { unlink(input) }
    let output = try run(
      "/bin/sh",
      [
        "-c", "\"$0\" store --label=raw \"$@\" < \"$INPUT\"", secretTool, "xdg:schema",
        "org.offlinettl.Secret", "application", applicationID, "kind", kind, "key", key,
      ], environment: ["INPUT": input])
    guard output.status == 0 else {
      throw CocoaError(
        .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: output.standardError])
    }
  }

  /// The raw secret of a CLI store's item (`offline-ttl --backend secret-service`), through
  /// `secret-tool lookup`; empty when there is none.
  static func itemSecret(store: String, key: String) throws -> String {
    guard let secretTool = which("secret-tool") else { return "(secret-tool missing)" }
    let absolute = URL(fileURLWithPath: store).standardizedFileURL.path
    return try run(
      secretTool,
      [
        "lookup", "xdg:schema", "org.offlinettl.Secret", "application",
        "offline-ttl-cli:" + absolute, "kind", "item", "key", key,
      ]
    ).standardOutput
  }

  /// The CRC-32 (zlib's) of `text`, as 8 lowercase hex digits.
  static func crc32Hex(_ text: String) -> String {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in text.utf8 {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    let digits = String(crc ^ 0xFFFF_FFFF, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
  }

  /// Whether a program is on `PATH`.
  static func which(_ program: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      let candidate = "\(directory)/\(program)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}

extension WallClockInstant {
  /// Seconds since the epoch, for readable tests.
  static func at(_ seconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: seconds * 1_000_000_000)
  }
}
