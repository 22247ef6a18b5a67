import Foundation
import OfflineTTL
import OfflineTTLTesting

@testable import OfflineTTLCommandLine

/// Runs `offline-ttl <arguments>` in process on a manual clock (the store commands read it).
func runCommand(_ arguments: [String], clock: any WallClock) -> CommandRun {
  let context = CommandContext(
    standardOutput: OutputSink(), standardError: OutputSink(),
    standardInput: InputSource(text: ""), clock: clock, environment: [:])
  let code = OfflineTTLCommand.run(arguments, context: context)
  return CommandRun(
    exitCode: code, standardOutput: context.standardOutput.capturedText,
    standardError: context.standardError.capturedText)
}

/// 2023-11-14T22:13:20Z, a round instant for exact expected output.
let storeCommandStart = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

/// A temporary store with `items` written by `sign-in` at `storeCommandStart`.
func signedInStore(_ items: [String: String], clock: ManualWallClock) throws
  -> TemporaryStoreDirectory
{
  let directory = try TemporaryStoreDirectory(prefix: "cli-store")
  var arguments = ["sign-in", "--store", directory.appending("store")]
  for (key, text) in items.sorted(by: { $0.key < $1.key }) {
    let file = directory.appending("input-\(key)")
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    arguments += ["--put", "\(key)=\(file)"]
  }
  _ = runCommand(arguments, clock: clock)
  return directory
}
