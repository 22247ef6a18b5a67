import Foundation

/// Finds a command on `PATH` (`/usr/bin/env`-style), for tests that need a system tool.
///
/// A test that needs one is declared `@Test(.enabled(if: toolPath("x") != nil, "x is not
/// installed"))`, so the test runner reports it as skipped with the reason, never as passed.
///
/// - Parameter name: The command, e.g. `python3` or `faketime`.
/// - Returns: Its full path, or `nil` when it is not installed.
func toolPath(_ name: String) -> String? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
  for directory in path.split(separator: ":") {
    let candidate = "\(directory)/\(name)"
    if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
  }
  return nil
}
