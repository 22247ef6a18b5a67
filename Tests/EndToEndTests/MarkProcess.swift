import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs the built `offline-ttl` binary (beside the test bundle in `.build/<triple>/debug`, or
/// `$OFFLINE_TTL_BINARY`) for the mark end-to-end tests.
enum MarkProcess {
  struct Output {
    var status: Int32
    var standardOutput: String
    var standardError: String
  }

  struct Missing: Error, CustomStringConvertible {
    let path: String
    var description: String {
      "offline-ttl is not built at \(path); run `swift build --build-tests` first"
    }
  }

  /// The binary's path.
  static func binary() throws -> String {
    if let path = ProcessInfo.processInfo.environment["OFFLINE_TTL_BINARY"] { return path }
    let me =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
    // On Darwin the test binary is inside an .xctest bundle.
    while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
    let path = directory.appendingPathComponent("offline-ttl").path
    guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing(path: path) }
    return path
  }

  /// Starts `offline-ttl arguments` with stdout and stderr on pipes.
  static func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try binary())
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    return (process, output, error)
  }

  /// Runs `offline-ttl arguments` to completion.
  static func run(_ arguments: [String]) throws -> Output {
    let (process, output, error) = try start(arguments)
    // Read stderr on another thread so neither pipe can fill and block the child.
    let errorData = Mutex<Data>(Data())
    let reader = Thread {
      errorData.withLock { $0 = error.fileHandleForReading.readDataToEndOfFile() }
    }
    reader.start()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while reader.isExecuting || !reader.isFinished { usleep(1_000) }
    return Output(
      status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
      standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
  }

  /// Parses `mark N generation G` lines.
  static func parse(_ text: String) -> [(mark: Int64, generation: UInt64)] {
    text.split(separator: "\n").compactMap { line in
      let words = line.split(separator: " ")
      guard words.count == 4, words[0] == "mark", words[2] == "generation",
        let mark = Int64(words[1]), let generation = UInt64(words[3])
      else { return nil }
      return (mark, generation)
    }
  }
}
