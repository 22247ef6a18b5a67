import Foundation
import OfflineTTL
import OfflineTTLTesting

@testable import OfflineTTLCommandLine

/// The boot id of the default test boot clock.
let storeCommandBootID = BootID(uuidString: "00000000-0000-4000-8000-000000000001")!

/// A boot clock that stands still at 1000 s on ``storeCommandBootID``: with it, the boot-clock
/// floor stays at the sign-in time, so outputs are exact.
func stillBootClock() -> ManualBootClock {
  ManualBootClock(bootID: storeCommandBootID, sinceBoot: .seconds(1000))
}

/// Runs `offline-ttl <arguments>` in process on a manual clock (the store commands read it) and
/// a boot clock (by default one that stands still).
func runCommand(
  _ arguments: [String], clock: any WallClock, bootClock: (any BootClock)? = stillBootClock()
) -> CommandRun {
  let context = CommandContext(
    standardOutput: OutputSink(), standardError: OutputSink(),
    standardInput: InputSource(text: ""), clock: clock, environment: [:], bootClock: bootClock)
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
