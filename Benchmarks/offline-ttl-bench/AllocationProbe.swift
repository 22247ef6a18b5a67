import Foundation

/// Counts the heap allocations of a repeated check with valgrind's memcheck (the "total heap
/// usage: N allocs" line it prints at exit): two children of ``SyncProbe``'s kind (this program
/// with a hidden subcommand: sign in, write one item, make N checks within the mark resolution),
/// with N = `fewer` and N = `more`, give the per-check count by difference. A check that writes
/// nothing should allocate nothing; the few left are the checks that write as the wall clock
/// passes the mark resolution (1 s), about one in every few thousand under valgrind.
enum AllocationProbe {
  /// The valgrind executable, if installed.
  static var valgrind: String? {
    ["/usr/bin/valgrind", "/bin/valgrind"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }

  /// Heap allocations per repeated check.
  ///
  /// - Parameters:
  ///   - directory: A work directory (each child uses its own store inside it).
  ///   - fewer: The checks of the first child.
  ///   - more: The checks of the second child (more than `fewer`).
  /// - Throws: ``BenchError`` when valgrind is missing, a child fails or its log has no count.
  static func perRepeatedCheck(directory: String, fewer: Int = 100, more: Int = 1_100) throws
    -> Double
  {
    guard let valgrind else { throw BenchError.failed("valgrind is not installed") }
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    func allocations(_ count: Int) throws -> Int {
      let log = directory + "/memcheck-\(count).txt"
      try BenchProcess.run(
        executable: valgrind,
        arguments: [
          "--tool=memcheck", "--leak-check=no", "--log-file=" + log,
          BenchProcess.selfExecutable, SyncProbe.subcommand, "--dir",
          directory + "/store-\(count)", "--checks", String(count), "--repeated",
        ])
      let text = try String(contentsOfFile: log, encoding: .utf8)
      guard
        let line = text.split(separator: "\n").first(where: { $0.contains("total heap usage:") }),
        let field = line.split(separator: ":").last?.split(separator: " ").first,
        let value = Int(field.filter(\.isNumber))
      else {
        throw BenchError.failed("no heap usage line in \(log)")
      }
      return value
    }
    let difference = try allocations(more) - allocations(fewer)
    return Double(difference) / Double(more - fewer)
  }
}
