import Foundation

/// Child processes and paths shared by the benchmarks.
enum BenchProcess {
  /// This program's own executable (`/proc/self/exe` resolved).
  static var selfExecutable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  /// The folder holding this executable: `.build/release` for a release build.
  static var executableDirectory: URL {
    URL(fileURLWithPath: selfExecutable).deletingLastPathComponent()
  }

  /// The package root: the folder above `Benchmarks/` that this source was compiled from, or the
  /// current directory when that folder is gone.
  static var packageRoot: URL {
    let root = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    if FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
      return root
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
  }

  /// `.build/bench-work/`: every benchmark's files (on the same disk as the build, not a tmpfs).
  static var workRoot: URL { packageRoot.appendingPathComponent(".build/bench-work") }

  /// Where ``discard(_:)`` moves directories until ``emptyTrashInBackground()`` deletes them.
  static var trash: URL { workRoot.appendingPathComponent(".trash") }

  /// Moves a work directory out of the way at once (a rename) instead of deleting it: on this
  /// machine's disk (ext4 mounted with `discard`, shared) deleting 100,000 files takes minutes,
  /// which would dwarf the benchmarks. `main` empties the trash in the background, at idle I/O
  /// priority, after the last figure. Use this instead of `FileManager.removeItem`.
  static func discard(_ directory: URL) {
    let manager = FileManager.default
    guard manager.fileExists(atPath: directory.path) else { return }
    try? manager.createDirectory(at: trash, withIntermediateDirectories: true)
    let target = trash.appendingPathComponent(directory.lastPathComponent + "-" + UUID().uuidString)
    if (try? manager.moveItem(at: directory, to: target)) == nil {
      try? manager.removeItem(at: directory)
    }
  }

  /// Deletes the trash in a detached `rm -rf` at idle I/O priority (`ionice -c 3`, `nice`), so
  /// that no figure pays for it. Does nothing when the trash is empty.
  static func emptyTrashInBackground() {
    let manager = FileManager.default
    guard let entries = try? manager.contentsOfDirectory(atPath: trash.path), !entries.isEmpty
    else { return }
    let doomed = workRoot.appendingPathComponent(".trash-" + UUID().uuidString)
    guard (try? manager.moveItem(at: trash, to: doomed)) != nil else { return }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [
      "-c", "nice -n 19 ionice -c 3 rm -rf \"$0\" 2>/dev/null || rm -rf \"$0\"",
      doomed.path,
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
  }

  /// A fresh, empty work directory under ``workRoot``, created 0700 (an old one is discarded),
  /// named `name` and this process's id: two benchmark runs at once, even of one build, never
  /// share a directory.
  static func workDirectory(_ name: String) throws -> URL {
    let directory = workRoot.appendingPathComponent("\(name)-\(getpid())")
    let manager = FileManager.default
    discard(directory)
    try manager.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return directory
  }

  /// Runs a program to completion and returns its stdout.
  ///
  /// - Parameters:
  ///   - executable: The program's path.
  ///   - arguments: Its arguments.
  ///   - stdinPath: A file to feed on stdin, or `nil` for none.
  ///   - stdoutPath: A file to write stdout to (then the result is empty), or `nil` to capture it.
  ///   - environment: Extra environment variables.
  /// - Returns: The captured stdout (empty when `stdoutPath` is set).
  /// - Throws: ``BenchError`` when it cannot start or exits nonzero (with its stderr).
  @discardableResult
  static func run(
    executable: String, arguments: [String], stdinPath: String? = nil,
    stdoutPath: String? = nil, environment: [String: String] = [:],
    acceptedExitCodes: Set<Int32> = [0]
  ) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    if let stdinPath {
      guard let handle = FileHandle(forReadingAtPath: stdinPath) else {
        throw BenchError.failed("cannot open \(stdinPath)")
      }
      process.standardInput = handle
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    let outputPipe = Pipe()
    if let stdoutPath {
      _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
      guard let handle = FileHandle(forWritingAtPath: stdoutPath) else {
        throw BenchError.failed("cannot create \(stdoutPath)")
      }
      process.standardOutput = handle
    } else {
      process.standardOutput = outputPipe
    }
    let errorFile = FileManager.default.temporaryDirectory
      .appendingPathComponent("offline-ttl-bench-stderr-\(getpid())-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    process.standardError = try FileHandle(forWritingTo: errorFile)
    do {
      try process.run()
    } catch {
      throw BenchError.failed("cannot run \(executable): \(error)")
    }
    var output = Data()
    if stdoutPath == nil {
      output = outputPipe.fileHandleForReading.readDataToEndOfFile()
    }
    process.waitUntilExit()
    let status = process.terminationStatus
    guard process.terminationReason == .exit, acceptedExitCodes.contains(status) else {
      let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
      let tail = stderr.split(separator: "\n").suffix(5).joined(separator: "\n")
      throw BenchError.failed(
        "\(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.joined(separator: " "))"
          + " exited \(status): \(tail)")
    }
    return String(decoding: output, as: UTF8.self)
  }
}
