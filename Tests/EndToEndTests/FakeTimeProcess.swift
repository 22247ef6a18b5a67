import Foundation

/// Runs the built `offline-ttl` binary, optionally under libfaketime, bounded by a timeout.
///
/// Only the child is faked, never the test runner (PLATFORM.md: timers hang under libfaketime).
enum FakeTimeProcess {
  /// Where libfaketime is installed by the Debian package `faketime`, or `nil`.
  static let library: String? = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
  ].first { FileManager.default.fileExists(atPath: $0) }

  /// The `offline-ttl` binary, found as ``BinaryRunner`` finds it (`$OFFLINE_TTL_BIN_DIR`, beside
  /// the test resources, `.build/debug`), or beside the test runner as a last resort.
  static var binary: URL {
    if let found = try? BinaryRunner().executable { return found }
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    return runner.deletingLastPathComponent().appendingPathComponent("offline-ttl")
  }

  /// The result of one run.
  struct Output {
    var status: Int32
    var standardOutput: String
    var standardError: String
  }

  /// Runs `offline-ttl arguments`, with `environment` added to this process's, and kills it by
  /// pid when it outlives `timeout`.
  static func run(
    _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 20
  ) throws -> Output {
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    // Output goes to temporary files, so a full pipe can never block the child.
    let scratch = FileManager.default.temporaryDirectory
      .appendingPathComponent("offline-ttl-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outURL = scratch.appendingPathComponent("stdout")
    let errURL = scratch.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    defer {
      try? out.close()
      try? err.close()
    }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    try process.run()
    if done.wait(timeout: .now() + timeout) == .timedOut {
      kill(process.processIdentifier, SIGKILL)
      done.wait()
    }
    let outData = try Data(contentsOf: outURL)
    let errData = try Data(contentsOf: errURL)
    return Output(
      status: process.terminationStatus,
      standardOutput: String(decoding: outData, as: UTF8.self),
      standardError: String(decoding: errData, as: UTF8.self))
  }

  /// The environment that freezes the child's wall clock at `instant` (whole seconds, UTC) and
  /// keeps its boot clock real (`FAKETIME_DONT_FAKE_MONOTONIC=1`).
  static func frozenWallClock(atSecondsSinceEpoch seconds: Int64, library: String) -> [String:
    String]
  {
    let date = Date(timeIntervalSince1970: TimeInterval(seconds))
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return [
      "LD_PRELOAD": library,
      "FAKETIME": formatter.string(from: date),
      "FAKETIME_DONT_FAKE_MONOTONIC": "1",
      "FAKETIME_NO_CACHE": "1",
      "TZ": "UTC",
    ]
  }
}
