import Foundation

/// This process's I/O counters from `/proc/self/io`: used to verify that a check skipped its
/// write (no write-type system call at all, hence no `fdatasync` of new data either).
enum ProcessIO {
  /// `syscw`: the number of write-type system calls (`write`, `pwrite`, `writev`, ...) this
  /// process has made, or `nil` where `/proc/self/io` is unavailable.
  static func writeSyscalls() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else {
      return nil
    }
    for line in text.split(separator: "\n") where line.hasPrefix("syscw:") {
      return Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces))
    }
    return nil
  }

  /// Write-type system calls per operation while `body` runs `count` operations, or `nil` when
  /// the counter is unavailable.
  static func writesPerOperation(count: Int, _ body: () throws -> Void) rethrows -> Double? {
    let before = writeSyscalls()
    try body()
    guard let before, let after = writeSyscalls(), count > 0 else { return nil }
    return Double(after - before) / Double(count)
  }
}
