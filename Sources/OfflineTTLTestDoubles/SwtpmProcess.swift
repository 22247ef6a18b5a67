import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A software TPM 2.0 (`swtpm`, Debian `swtpm swtpm-tools`) for tests and benchmarks: started
/// on a free loopback port with its state in a temporary directory, restarted the way a machine
/// reboots (orderly) or loses power (killed), cleared, and stopped.
///
/// ```swift
/// let tpm = try SwtpmProcess()
/// defer { tpm.stop() }
/// let clock = ESYSTPMClock(tcti: tpm.tcti)        // module OfflineTTLTPM
/// try tpm.orderlyRestart()                        // TPM2_Shutdown, then a new swtpm process
/// try tpm.powerLoss()                              // SIGKILL, then a new swtpm process
/// ```
///
/// The orderly shutdown and the clear use `tpm2_shutdown` and `tpm2_clear` from `tpm2-tools`.
/// Not thread-safe: one test drives one instance.
public final class SwtpmProcess: @unchecked Sendable {
  // @unchecked: the process and port change only in methods that one test calls in sequence.

  /// Where the TPM keeps its state (removed by ``stop()`` unless it was given).
  public let stateDirectory: String
  /// The command port; the control port is the next one.
  public private(set) var port: Int = 0
  private var process: Process?
  private let ownsState: Bool

  /// Whether `swtpm`, `tpm2_shutdown` and `tpm2_clear` are on the `PATH`.
  public static var isAvailable: Bool {
    ["swtpm", "tpm2_shutdown", "tpm2_clear"].allSatisfy { executable(named: $0) != nil }
  }

  /// The TCTI configuration string for this TPM, `swtpm:host=127.0.0.1,port=P`.
  public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

  /// Starts a TPM.
  ///
  /// - Parameter stateDirectory: An existing state directory to reuse (another process's TPM
  ///   "in the same machine"); a new temporary one by default.
  /// - Throws: ``SwtpmError`` when `swtpm` is missing or does not start.
  public init(stateDirectory: String? = nil) throws {
    if let stateDirectory {
      self.stateDirectory = stateDirectory
      ownsState = false
    } else {
      let path =
        FileManager.default.temporaryDirectory.path + "/offline-ttl-swtpm-"
        + UUID().uuidString
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      self.stateDirectory = path
      ownsState = true
    }
    try start()
  }

  deinit { send(SIGKILL) }

  /// An orderly reboot: `TPM2_Shutdown(CLEAR)`, as the kernel sends at shutdown (the TPM saves its clock and state to NV, which
  /// swtpm writes to its state directory), power off, start again (the TPM resets: its clock
  /// continues from where it was, `resetCount` rises, `safe` stays YES).
  ///
  /// - Throws: ``SwtpmError``.
  public func orderlyRestart() throws {
    try run("tpm2_shutdown", ["-c", "-T", tcti])
    send(SIGKILL)
    try start()
  }

  /// A power loss: SIGKILL with no shutdown, then start again (the clock falls back to its last
  /// NV save and `safe` reads NO).
  ///
  /// - Throws: ``SwtpmError``.
  public func powerLoss() throws {
    send(SIGKILL)
    try start()
  }

  /// `TPM2_Clear` with the (empty) lockout authorization: a new storage seed, so a new identity.
  ///
  /// - Throws: ``SwtpmError``.
  public func clear() throws {
    try run("tpm2_clear", ["-T", tcti])
  }

  /// Whether `tpm2_readclock` and `tpm2_setclock` (for ``advanceClock(by:)``) are on the
  /// `PATH`.
  public static var canSetClock: Bool {
    ["tpm2_readclock", "tpm2_setclock"].allSatisfy { executable(named: $0) != nil }
  }

  /// Moves the TPM's clock forward with `TPM2_ClockSet` (the owner may only ever move it
  /// forward): TPM time passes without waiting for it, the way a TPM sees minutes pass while its
  /// machine runs. The reset and restart counts and `safe` are unchanged.
  ///
  /// - Parameter duration: How far, in whole milliseconds; more than zero.
  /// - Returns: The clock after, in milliseconds.
  /// - Throws: ``SwtpmError`` when `tpm2_readclock` or `tpm2_setclock` is missing or fails.
  @discardableResult
  public func advanceClock(by duration: Duration) throws -> UInt64 {
    guard let readTool = Self.executable(named: "tpm2_readclock") else {
      throw SwtpmError("tpm2_readclock is not installed (Debian: tpm2-tools)")
    }
    let (status, output) = try Self.execute(readTool, ["-T", tcti])
    let clockLine = output.split(separator: "\n").first {
      $0.trimmingCharacters(in: .whitespaces).hasPrefix("clock: ")
    }
    guard status == 0,
      let now = clockLine.flatMap({ UInt64($0.trimmingCharacters(in: .whitespaces).dropFirst(7)) })
    else { throw SwtpmError("tpm2_readclock failed (\(status)): \(output)") }
    let milliseconds =
      UInt64(duration.components.seconds) * 1000
      + UInt64(duration.components.attoseconds / 1_000_000_000_000_000)
    let target = now + milliseconds
    try run("tpm2_setclock", ["-T", tcti, String(target)])
    return target
  }

  /// Stops the TPM (SIGKILL) and removes its state directory when this instance created it.
  public func stop() {
    send(SIGKILL)
    if ownsState { try? FileManager.default.removeItem(atPath: stateDirectory) }
  }

  /// Starts swtpm as a child process on a free port pair (tries up to 20 random pairs in
  /// 20000...59999; a restart reuses its pair) and waits until its command port accepts connections (at most 5 s).
  private func start() throws {
    guard let swtpm = Self.executable(named: "swtpm") else {
      throw SwtpmError("swtpm is not installed (Debian: swtpm swtpm-tools)")
    }
    var lastError = ""
    // A restart keeps its port (the TCTI string stays valid): retried for up to 2 s.
    let tries = port == 0 ? 20 : 200
    for _ in 0..<tries {
      let candidate = port == 0 ? Int.random(in: 10_000...29_999) * 2 : port
      guard Self.isFree(candidate), Self.isFree(candidate + 1) else {
        if port != 0 { usleep(10_000) }
        continue
      }
      let process = Process()
      process.executableURL = URL(fileURLWithPath: swtpm)
      process.arguments = [
        "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
        "--server", "type=tcp,port=\(candidate),bindaddr=127.0.0.1",
        "--ctrl", "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1",
        "--flags", "not-need-init,startup-clear",
      ]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      for _ in 0..<500 {
        if !process.isRunning { break }
        if Self.accepts(candidate) {
          self.process = process
          port = candidate
          return
        }
        usleep(10_000)
      }
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
      }
      process.waitUntilExit()
      lastError = "exit status \(process.terminationStatus) on port \(candidate)"
    }
    throw SwtpmError("swtpm did not start: \(lastError)")
  }

  private func send(_ signal: Int32) {
    guard let process else { return }
    if process.isRunning { kill(process.processIdentifier, signal) }
    process.waitUntilExit()
    self.process = nil
  }

  private func run(_ tool: String, _ arguments: [String]) throws {
    guard let path = Self.executable(named: tool) else {
      throw SwtpmError("\(tool) is not installed (Debian: tpm2-tools)")
    }
    let (status, output) = try Self.execute(path, arguments)
    guard status == 0 else { throw SwtpmError("\(tool) failed (\(status)): \(output)") }
  }

  /// How long one `tpm2-tools` command may run before it is killed: a TPM that another client
  /// holds, or that hangs, makes them wait forever.
  public static let toolTimeout: Duration = .seconds(10)

  /// Runs a tool with its output captured, killed (SIGKILL) when it outlives ``toolTimeout``.
  private static func execute(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
    let outputPath =
      FileManager.default.temporaryDirectory.path + "/offline-ttl-swtpm-tool-" + UUID().uuidString
    guard FileManager.default.createFile(atPath: outputPath, contents: nil),
      let output = FileHandle(forWritingAtPath: outputPath)
    else { throw SwtpmError("cannot create \(outputPath)") }
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = output
    process.standardError = output
    try process.run()
    try? output.close()
    let deadline = ContinuousClock.now.advanced(by: toolTimeout)
    while process.isRunning, ContinuousClock.now < deadline { usleep(5_000) }
    let timedOut = process.isRunning
    if timedOut { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    let text = String(
      decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
    if timedOut {
      throw SwtpmError(
        "\((path as NSString).lastPathComponent) did not finish within \(toolTimeout); killed:"
          + " \(text)")
    }
    return (process.terminationStatus, text)
  }

  /// Whether nothing listens on 127.0.0.1:`port` (a bind succeeds).
  static func isFree(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = loopback(port)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  /// Whether something accepts a TCP connection on 127.0.0.1:`port`.
  private static func accepts(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = loopback(port)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  static func loopback(_ port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }

  /// The full path of an executable on the `PATH`, or `nil`.
  public static func executable(named name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}

/// The software TPM could not be started or driven.
public struct SwtpmError: Error, Sendable, CustomStringConvertible {
  /// What went wrong.
  public let description: String
  init(_ description: String) { self.description = description }
}
