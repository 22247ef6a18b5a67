/// One `offline-ttl` subcommand. Each lives in its own file under `Subcommands/` and is listed
/// once in ``SubcommandRegistry``.
///
/// The framework reads the arguments against ``configuration`` before ``run(_:context:)`` is
/// called: it handles `--help`/`-h`, rejects unknown options, missing option values and extra
/// positionals, and turns a thrown ``UsageError`` into `error: ...` plus usage (exit 64) and a
/// thrown ``CommandFailure`` into `error: ...` with its exit status.
protocol Subcommand {
  /// The name, options and help text.
  static var configuration: CommandConfiguration { get }

  /// Runs the subcommand.
  ///
  /// - Parameters:
  ///   - arguments: The arguments after the subcommand's name, already checked against
  ///     ``configuration``.
  ///   - context: Standard input and output, the wall clock and the environment.
  /// - Returns: The exit status.
  /// - Throws: ``UsageError`` for a bad argument value, ``CommandFailure`` for a failure with a
  ///   specific exit status.
  static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> ExitCode
}
