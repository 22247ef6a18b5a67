import Foundation

/// The process's command-line arguments, program name first.
///
/// `CommandLine.arguments` is empty in a Swift program started under libfaketime (`LD_PRELOAD`
/// of `libfaketime.so.1`, measured with Swift 6.3.1 on Linux: `argc` reads 0), so the end-to-end
/// tests that move the wall clock would lose every argument. Then this reads the kernel's copy,
/// `/proc/self/cmdline` (NUL-separated), instead.
public enum ProcessArguments {
  /// `CommandLine.arguments`, or `/proc/self/cmdline` when those are empty.
  ///
  /// - Returns: The arguments, program name first.
  public static func current() -> [String] {
    let arguments = CommandLine.arguments
    if !arguments.isEmpty { return arguments }
    guard let data = FileManager.default.contents(atPath: "/proc/self/cmdline") else {
      return arguments
    }
    var parts = data.split(separator: 0, omittingEmptySubsequences: false)
    if parts.last?.isEmpty == true { parts.removeLast() }
    return parts.map { String(decoding: $0, as: UTF8.self) }
  }
}
