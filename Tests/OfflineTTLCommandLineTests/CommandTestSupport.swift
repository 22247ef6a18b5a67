import OfflineTTL
import OfflineTTLTesting

@testable import OfflineTTLCommandLine

/// The result of running `offline-ttl` in process over memory.
struct CommandRun {
  var exitCode: ExitCode
  var standardOutput: String
  var standardError: String
}

/// Runs `offline-ttl <arguments>` in process with `input` on standard input and a clock that
/// fails the test when read (the commands under test here must not look at the time).
func runCommand(_ arguments: [String], input: String = "") -> CommandRun {
  let context = CommandContext(
    standardOutput: OutputSink(), standardError: OutputSink(),
    standardInput: InputSource(text: input), clock: UnimplementedWallClock(),
    environment: [:])
  let code = OfflineTTLCommand.run(arguments, context: context)
  return CommandRun(
    exitCode: code, standardOutput: context.standardOutput.capturedText,
    standardError: context.standardError.capturedText)
}
