import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What one run of a built executable produced.
struct BinaryResult: Sendable {
  /// The exit status, or `nil` when the process was killed (timeout or signal).
  var exitCode: Int32?
  /// Standard output, as bytes decoded as UTF-8.
  var standardOutput: String
  /// Standard error, decoded as UTF-8.
  var standardError: String
  /// Whether the run was killed because it outlived its timeout.
  var timedOut: Bool
  /// The wall time the run took.
  var elapsed: Duration
}

/// Runs executables built by this package (`offline-ttl` by default), or a system tool, from
/// end-to-end tests: the one child-process runner of this target.
///
/// The binary is found, in order, in `$OFFLINE_TTL_BIN_DIR`, beside the test resource bundle
/// (SwiftPM puts both in `.build/<config>/`), and in `.build/debug` of the package that holds
/// this file. It is never built here: `Scripts/test.sh` runs `swift build --build-tests` first.
///
/// Standard input, output and error go through temporary files, so large inputs and outputs
/// cannot deadlock on a full pipe. A run that outlives its timeout is killed by its pid
/// (SIGKILL) and reported with `timedOut`. `launcher` puts a command in front of the binary,
/// e.g. `["faketime", "-f", "-2d"]`; ``FakeTime`` builds a libfaketime environment instead
/// (under libfaketime the child's `CommandLine.arguments` is empty; the binary reads its
/// arguments through `ProcessArguments`). ``start(_:environment:pipesStandardOutput:)`` returns
/// a ``RunningBinary`` for tests that kill the child mid-run.
struct BinaryRunner: Sendable {
  /// The executable's full path.
  let executable: URL

  /// How long a child may run before it is killed and the run recorded as timed out: a bound
  /// that turns a hang into a failure, never a measure of speed. Far above what any command of
  /// these tests takes on a loaded machine (2 cores shared with several builds: commands that
  /// take a few hundred milliseconds quiet take seconds).
  static let hangBound: Duration = .seconds(120)

  /// Finds the built executable `name`.
  ///
  /// - Throws: ``BinaryRunnerError`` listing where it looked.
  init(_ name: String = "offline-ttl") throws {
    var candidates: [URL] = []
    if let directory = ProcessInfo.processInfo.environment["OFFLINE_TTL_BIN_DIR"] {
      candidates.append(URL(fileURLWithPath: directory).appendingPathComponent(name))
    }
    candidates.append(
      Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
    let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    candidates.append(packageRoot.appendingPathComponent(".build/debug/\(name)"))
    guard
      let found = candidates.first(where: {
        FileManager.default.isExecutableFile(atPath: $0.path)
      })
    else {
      throw BinaryRunnerError(
        "no built '\(name)' (run `swift build` first); looked at "
          + candidates.map(\.path).joined(separator: ", "))
    }
    executable = found
  }

  /// Runs the executable at `path` (a system tool such as `python3`, e.g. from ``toolPath(_:)``).
  ///
  /// - Parameter path: The executable's full path.
  init(path: String) {
    executable = URL(fileURLWithPath: path)
  }

  /// Copies the executable to `path` (mode 0755, which must not exist yet) and returns a runner
  /// for the copy, e.g. for a user who may not reach the build directory.
  ///
  /// The copy is written through a close-on-exec descriptor. Foundation's `copyItem` opens its
  /// destination without `O_CLOEXEC`, and `Process` only closes in the child the descriptors it
  /// found open before it started the child: a child another test thread starts in between keeps
  /// the writable descriptor for its whole life, and running the copy then fails with `ETXTBSY`
  /// ("Text file busy"). That happened once in CI, where a large descriptor limit makes `Process`
  /// take long to list the open ones.
  ///
  /// - Parameters:
  ///   - path: Where the copy goes.
  ///   - whileWriting: Called with the writable descriptor after the bytes are written and
  ///     before it is closed (tests start a child there).
  /// - Returns: A runner for the copy.
  /// - Throws: ``BinaryRunnerError`` naming the step and `errno`, or what `whileWriting` throws.
  func copy(to path: String, whileWriting: (Int32) throws -> Void = { _ in }) throws
    -> BinaryRunner
  {
    let bytes = try Data(contentsOf: executable)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw BinaryRunnerError("cannot create \(path): errno \(errno)") }
    defer { close(fd) }
    var written = 0
    try bytes.withUnsafeBytes { buffer in
      while written < buffer.count {
        let count = write(fd, buffer.baseAddress! + written, buffer.count - written)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { throw BinaryRunnerError("cannot write \(path): errno \(errno)") }
        written += count
      }
    }
    // The umask may have taken bits from the 0755 given to open(2).
    guard fchmod(fd, 0o755) == 0 else {
      throw BinaryRunnerError("cannot make \(path) executable: errno \(errno)")
    }
    try whileWriting(fd)
    return BinaryRunner(path: path)
  }

  /// The folder of test support files (`Tests/EndToEndTests/Support`, copied as a resource).
  static var supportDirectory: URL {
    Bundle.module.url(forResource: "Support", withExtension: nil)!
  }

  /// Runs the executable and waits for it, killing it by pid when it outlives `timeout`.
  ///
  /// - Parameters:
  ///   - arguments: The arguments after the program name.
  ///   - standardInput: Bytes for standard input (empty by default).
  ///   - environment: Variables to add to (or override in) this process's environment, e.g.
  ///     ``FakeTime/frozenWallClock(atSecondsSinceEpoch:library:)``.
  ///   - launcher: A command and arguments to run the executable under, e.g. `faketime`.
  ///   - timeout: How long to wait before killing it.
  /// - Returns: Exit status, output and error text.
  /// - Throws: ``BinaryRunnerError`` when it cannot be started.
  func run(
    _ arguments: [String], standardInput: Data = Data(), environment: [String: String] = [:],
    launcher: [String] = [], timeout: Duration = hangBound
  ) throws -> BinaryResult {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e")
    defer { scratch.remove() }
    let stdinFile = URL(fileURLWithPath: scratch.appending("stdin"))
    let stdoutFile = URL(fileURLWithPath: scratch.appending("stdout"))
    let stderrFile = URL(fileURLWithPath: scratch.appending("stderr"))
    try standardInput.write(to: stdinFile)
    try Data().write(to: stdoutFile)
    try Data().write(to: stderrFile)
    let child = try launch(
      arguments, environment: environment, launcher: launcher,
      standardInput: try FileHandle(forReadingFrom: stdinFile),
      standardOutput: try FileHandle(forWritingTo: stdoutFile),
      standardError: try FileHandle(forWritingTo: stderrFile))
    let exit = child.waitForExit(timeout: timeout)
    return BinaryResult(
      exitCode: exit.exitCode,
      standardOutput: String(decoding: try Data(contentsOf: stdoutFile), as: UTF8.self),
      standardError: String(decoding: try Data(contentsOf: stderrFile), as: UTF8.self),
      timedOut: exit.timedOut, elapsed: exit.elapsed)
  }

  /// Starts the executable and returns at once, for tests that kill it mid-run.
  ///
  /// Standard input is empty and standard error is discarded.
  ///
  /// - Parameters:
  ///   - arguments: The arguments after the program name.
  ///   - environment: Variables to add to (or override in) this process's environment.
  ///   - pipesStandardOutput: Whether standard output goes to a pipe
  ///     (``RunningBinary/standardOutput``) rather than being discarded. Read the pipe until its
  ///     end, or the child blocks once it is full.
  /// - Returns: The running child.
  /// - Throws: ``BinaryRunnerError`` when it cannot be started.
  func start(
    _ arguments: [String], environment: [String: String] = [:], pipesStandardOutput: Bool = false
  ) throws -> RunningBinary {
    try launch(
      arguments, environment: environment, launcher: [], standardInput: FileHandle.nullDevice,
      standardOutput: pipesStandardOutput ? Pipe() : FileHandle.nullDevice,
      standardError: FileHandle.nullDevice)
  }

  /// Starts the executable with the given standard streams (each a `FileHandle` or `Pipe`).
  private func launch(
    _ arguments: [String], environment: [String: String], launcher: [String],
    standardInput: Any, standardOutput: Any, standardError: Any
  ) throws -> RunningBinary {
    let process = Process()
    if launcher.isEmpty {
      process.executableURL = executable
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = launcher + [executable.path] + arguments
    }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = standardInput
    process.standardOutput = standardOutput
    process.standardError = standardError
    let started = ContinuousClock.now
    do {
      try process.run()
    } catch {
      throw BinaryRunnerError("cannot start \(executable.path): \(error)")
    }
    return RunningBinary(
      process: process, standardOutput: (standardOutput as? Pipe)?.fileHandleForReading,
      started: started)
  }

  /// Runs the executable with text on standard input.
  func run(
    _ arguments: [String], input: String, environment: [String: String] = [:],
    timeout: Duration = hangBound
  ) throws -> BinaryResult {
    try run(
      arguments, standardInput: Data(input.utf8), environment: environment, timeout: timeout)
  }
}

/// The binary could not be found or started.
struct BinaryRunnerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
