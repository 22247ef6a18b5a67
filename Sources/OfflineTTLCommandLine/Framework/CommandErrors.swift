/// The command line was wrong: printed as `error: <message>` followed by the subcommand's usage
/// on standard error, exit status 64.
struct UsageError: Error, Equatable, CustomStringConvertible {
  /// One sentence saying what was wrong, without the `error: ` prefix.
  let message: String

  init(_ message: String) { self.message = message }

  var description: String { message }
}

/// A subcommand failed after its arguments were read: printed as `error: <message>` on
/// standard error (no usage), with the given exit status (65 bad data, 74 store unusable, ...).
struct CommandFailure: Error, Equatable, CustomStringConvertible {
  /// The process exit status.
  let exitCode: ExitCode
  /// One sentence saying what failed, without the `error: ` prefix.
  let message: String

  init(_ exitCode: ExitCode, _ message: String) {
    self.exitCode = exitCode
    self.message = message
  }

  var description: String { message }
}
