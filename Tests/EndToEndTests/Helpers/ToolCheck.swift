import Foundation

/// Finds a command on `PATH` (`/usr/bin/env`-style), for tests that need a system tool.
///
/// - Parameter name: The command, e.g. `python3` or `faketime`.
/// - Returns: Its full path, or `nil` after printing a line naming the missing tool (the house
///   rule: a test whose tool is missing returns early and says so).
func requireTool(_ name: String) -> String? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
  for directory in path.split(separator: ":") {
    let candidate = "\(directory)/\(name)"
    if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
  }
  print("skipping: the system tool '\(name)' is not installed")
  return nil
}
