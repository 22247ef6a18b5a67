import Foundation

/// python-diskcache running `Benchmarks/peer/diskcache_peer.py --serve` in a child process: each
/// call to ``time(_:)`` asks it for one round of decisions, so rounds interleave with ours.
final class DiskcachePeer {
  /// The pinned diskcache version installed into the venv.
  static let requirement = "diskcache==5.6.3"

  /// The setup line the script printed (SQLite synchronous, journal mode, versions).
  private(set) var setup: [String: Any] = [:]
  private let process: Process
  private let input: FileHandle
  private let output: FileHandle
  private var pending = Data()

  /// Starts the peer on a cache in `directory`, creating the venv when missing.
  ///
  /// - Parameters:
  ///   - directory: The cache directory (created by diskcache).
  ///   - note: Receives remarks (venv created, versions).
  /// - Throws: ``BenchError`` when python3, the venv, diskcache or the script fails.
  init(directory: String, note: (String) -> Void) throws {
    let python = try Self.ensureVenv(note: note)
    let script = BenchProcess.packageRoot.appendingPathComponent(
      "Benchmarks/peer/diskcache_peer.py"
    ).path
    guard FileManager.default.fileExists(atPath: script) else {
      throw BenchError.failed("missing \(script)")
    }
    process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script, "--dir", directory, "--serve"]
    let stdinPipe = Pipe()
    let stdoutPipe = Pipe()
    process.standardInput = stdinPipe
    process.standardOutput = stdoutPipe
    process.standardError = FileHandle.standardError
    do {
      try process.run()
    } catch {
      throw BenchError.failed("cannot start \(python): \(error)")
    }
    input = stdinPipe.fileHandleForWriting
    output = stdoutPipe.fileHandleForReading
    let first = try readLine()
    guard let object = try? JSONSerialization.jsonObject(with: Data(first.utf8)),
      let dictionary = object as? [String: Any]
    else { throw BenchError.failed("diskcache peer said '\(first)'") }
    setup = dictionary
  }

  /// The setup the script reported.
  var description: String {
    let keys = ["diskcache_version", "python_version", "journal_mode", "synchronous"]
    return keys.map { "\($0)=\(setup[$0].map { "\($0)" } ?? "?")" }.joined(separator: " ")
  }

  /// Whether SQLite reported `synchronous = 2` (FULL).
  var isSynchronousFull: Bool { (setup["synchronous"] as? Int) == 2 }

  /// Times `count` diskcache decisions; nanoseconds each.
  func time(_ count: Int) throws -> [UInt64] {
    input.write(Data("\(count)\n".utf8))
    let line = try readLine()
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
      let dictionary = object as? [String: Any], let samples = dictionary["samples"] as? [Int],
      samples.count == count
    else { throw BenchError.failed("diskcache peer said '\(line.prefix(200))'") }
    // A refusal would be a cheaper, wrong figure: every decision must grant offline use.
    guard let fresh = dictionary["fresh"] as? Int, fresh == count else {
      throw BenchError.failed(
        "diskcache refused \(count - ((dictionary["fresh"] as? Int) ?? 0)) of \(count) decisions")
    }
    return samples.map { UInt64(Swift.max($0, 0)) }
  }

  /// Ends the child (closing its stdin) and waits for it.
  func finish() {
    try? input.close()
    process.waitUntilExit()
  }

  private func readLine() throws -> String {
    while true {
      if let newline = pending.firstIndex(of: 0x0A) {
        let line = pending[pending.startIndex..<newline]
        pending = Data(pending[(newline + 1)...])
        return String(decoding: line, as: UTF8.self)
      }
      let chunk = output.availableData
      if chunk.isEmpty { throw BenchError.failed("diskcache peer exited early") }
      pending.append(chunk)
    }
  }

  /// `.build/bench-venv/bin/python` with diskcache importable, creating the venv (python3 -m venv)
  /// and installing the pinned diskcache with pip when missing.
  static func ensureVenv(note: (String) -> Void) throws -> String {
    let venv = BenchProcess.packageRoot.appendingPathComponent(".build/bench-venv").path
    let python = venv + "/bin/python"
    let importable: Bool
    if FileManager.default.isExecutableFile(atPath: python) {
      importable =
        (try? BenchProcess.run(executable: python, arguments: ["-c", "import diskcache"])) != nil
    } else {
      importable = false
    }
    if importable { return python }
    note("creating \(venv) and installing \(requirement) (first run only)")
    if !FileManager.default.isExecutableFile(atPath: python) {
      try BenchProcess.run(executable: "/usr/bin/env", arguments: ["python3", "-m", "venv", venv])
    }
    try BenchProcess.run(
      executable: python,
      arguments: ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement])
    return python
  }
}
