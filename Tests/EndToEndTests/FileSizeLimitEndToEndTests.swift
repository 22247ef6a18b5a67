import Foundation
import OfflineTTLTesting
import Testing

/// A file size limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored) refuses the clock mark's write:
/// with `EFBIG` before any byte (the limit below the slot), or after a short write (the limit
/// inside the slot). Either way the check answers `expired` (`mark_not_persisted`), the record
/// file keeps its size and bytes, and the next check without the limit is fresh: no online
/// sign-in is needed.
@Suite(
  .enabled(
    if: toolPath("prlimit") != nil && toolPath("bash") != nil,
    "needs prlimit (util-linux) and bash"))
struct FileSizeLimitEndToEndTests {
  /// Runs `offline-ttl arguments` with a file size limit of `bytes` and `SIGXFSZ` ignored; its
  /// standard output goes through a pipe (the limit would refuse the output file too), and the
  /// exit status is the command's.
  func limited(_ bytes: Int, _ arguments: [String]) throws -> BinaryResult {
    try BinaryRunner().run(
      arguments,
      launcher: [
        "/usr/bin/env", "bash", "-c",
        "set -o pipefail; trap '' XFSZ; prlimit --fsize=\(bytes):\(bytes) \"$@\" | cat", "bash",
      ])
  }

  @Test(arguments: [0, 100, 4_096 + 100])
  func aRefusedWriteKeepsTheRecordReadable(_ limit: Int) throws {
    let signedIn = try SignedInStore(prefix: "offline-ttl-e2e-fsize")
    defer { signedIn.remove() }
    let (store, runner) = (signedIn.store, signedIn.runner)
    let record = URL(fileURLWithPath: store + "/clock-mark")
    // Twice, so that each slot is the target once (the writes alternate).
    for round in 1...2 {
      let before = try Data(contentsOf: record)
      // The mark must rise by its resolution for the check to write.
      Thread.sleep(forTimeInterval: 1.1)
      let status = try limited(
        limit, ["status", "--store", store, "--max-age", "1d", "--no-boot-floor", "--json"])
      let label = "limit \(limit), round \(round)"
      let after = try Data(contentsOf: record)
      #expect(after.count == 8_192, "\(label): the record file keeps its size")
      if status.exitCode == 0 {
        // This slot lies below the limit: the write went through (the other round refuses).
        #expect(limit > 0, "\(label): a write under a zero limit was acknowledged")
        continue
      }
      #expect(status.exitCode == 1, "\(label): \(status.standardOutput) \(status.standardError)")
      let object = try status.jsonObject()
      #expect(object["reasons"] as? [String] == ["mark_not_persisted"], "\(label): \(object)")
      #expect(after == before, "\(label): the record is byte for byte as it was")
      let back = try runner.run(["status", "--store", store, "--max-age", "1d", "--no-boot-floor"])
      #expect(back.exitCode == 0, "\(label): \(back.standardOutput) \(back.standardError)")
    }
  }
}
