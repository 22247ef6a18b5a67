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

  /// The position of the first argument whose bytes are not valid UTF-8 (the program name is
  /// 0), or `nil` when every argument is valid.
  ///
  /// ``current()`` decodes such an argument with U+FFFD in place of the bad bytes, which would
  /// silently name another key or path; the command refuses it instead (exit 64). Reads
  /// `CommandLine.unsafeArgv`, or `/proc/self/cmdline` when `argc` is 0 (libfaketime).
  ///
  /// - Returns: The index, or `nil`.
  /// - Complexity: O(n) in the total length of the arguments.
  public static func firstInvalidUTF8Index() -> Int? {
    var raw: [[UInt8]] = []
    let count = Int(CommandLine.argc)
    if count > 0 {
      for index in 0..<count {
        guard let pointer = CommandLine.unsafeArgv[index] else { break }
        raw.append(
          Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map {
            UInt8(bitPattern: $0)
          })
      }
    } else if let data = FileManager.default.contents(atPath: "/proc/self/cmdline") {
      raw = data.split(separator: 0, omittingEmptySubsequences: false).map { Array($0) }
    }
    return raw.firstIndex { String(validating: $0, as: UTF8.self) == nil }
  }
}
