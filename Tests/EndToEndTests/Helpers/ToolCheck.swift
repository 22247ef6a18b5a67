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

/// The launcher that runs a command under `strace` and kills it with `SIGKILL` at the
/// `occurrence`-th call of the system call `call` (1 for the first), tracing nothing to the
/// terminal: `strace -f -qq -o /dev/null -e trace=<call> -e inject=<call>:signal=KILL:when=<n>`.
///
/// - Parameters:
///   - strace: The `strace` command (a full path, or `"strace"` for the one on `PATH`).
///   - call: The system call, e.g. `"renameat"`.
///   - occurrence: Which call of it is the last the command makes.
func killedAt(strace: String = "strace", _ call: String, occurrence: Int) -> [String] {
  [
    strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(call)", "-e",
    "inject=\(call):signal=KILL:when=\(occurrence)",
  ]
}
