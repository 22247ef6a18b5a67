import Foundation
import OfflineTTLTesting
import Testing

/// With the boot-clock floor on, a boot id this process cannot read is a refusal
/// (`boot_clock_unavailable`), never a silent downgrade: at a check, at a read, and for the
/// whole generation of a sign-in that could not read it. `--no-boot-floor` is the documented way
/// to run without a boot clock.
@Suite(
  .enabled(if: MountNamespace.isUsable, "needs unshare (util-linux) with user+mount namespaces"))
struct BootClockUnavailableEndToEndTests {
  /// Runs `offline-ttl arguments` in a mount namespace where the boot id file shows garbage.
  func hidden(_ arguments: [String], garbage: String) throws -> BinaryResult {
    try MountNamespace.run(
      arguments, binding: [(source: garbage, target: "/proc/sys/kernel/random/boot_id")])
  }

  @Test func aHiddenBootIDRefusesChecksAndReadsAndSaysWhy() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-bootid")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    let garbage = scratch.appending("boot_id")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    try Data("not a uuid\n".utf8).write(to: URL(fileURLWithPath: garbage))
    let runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")

    let status = try hidden(
      ["status", "--store", store, "--max-age", "1d", "--json"], garbage: garbage)
    #expect(status.exitCode == 1, "\(status.standardOutput) \(status.standardError)")
    let object = try status.jsonObject()
    #expect(object["reasons"] as? [String] == ["boot_clock_unavailable"])
    let protections = try #require(object["protections"] as? [String: Any], "\(object)")
    #expect(protections["boot_clock_floor"] as? String == "unavailable")
    #expect(protections["mark_rule"] as? String == "active")

    let read = try hidden(["read", "--store", store, "--max-age", "1d", "token"], garbage: garbage)
    #expect(read.exitCode == 1, "\(read.standardOutput) \(read.standardError)")
    #expect(read.standardOutput.isEmpty, "no bytes are served")
    #expect(read.standardError.contains("boot_clock_unavailable"), "\(read.standardError)")

    // Without the floor, the same process is judged by the mark rule alone.
    let off = try hidden(
      ["status", "--store", store, "--max-age", "1d", "--no-boot-floor", "--json"], garbage: garbage
    )
    #expect(off.exitCode == 0, "\(off.standardOutput) \(off.standardError)")
    let offProtections = try #require(try off.jsonObject()["protections"] as? [String: Any])
    #expect(offProtections["boot_clock_floor"] as? String == "off")

    // Outside the namespace the boot clock is back: fresh again.
    let back = try runner.run(["status", "--store", store, "--max-age", "1d"])
    #expect(back.exitCode == 0, "\(back.standardOutput) \(back.standardError)")
  }

  @Test func aSignInThatCannotReadTheBootIDLeavesItsGenerationRefused() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-bootid-signin")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    let garbage = scratch.appending("boot_id")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    try Data("\n".utf8).write(to: URL(fileURLWithPath: garbage))
    let signIn = try hidden(
      ["sign-in", "--store", store, "--put", "token=\(token)"], garbage: garbage)
    #expect(signIn.exitCode == 0, "\(signIn.standardOutput) \(signIn.standardError)")
    let runner = try BinaryRunner()
    let status = try runner.run(["status", "--store", store, "--max-age", "1d", "--json"])
    #expect(status.exitCode == 1, "\(status.standardOutput) \(status.standardError)")
    #expect(try status.jsonObject()["reasons"] as? [String] == ["boot_clock_unavailable"])
    // A sign-in that can read the boot id recovers the store.
    #expect(try runner.run(["sign-in", "--store", store]).exitCode == 0)
    #expect(try runner.run(["status", "--store", store, "--max-age", "1d"]).exitCode == 0)
  }

  /// A FIFO or a socket bound over the boot id (a private mount namespace) is never waited on:
  /// the check reads no boot clock (`boot_clock_unavailable`) at once, instead of blocking in
  /// `open` while it holds the store's lock.
  @Test(arguments: ["FIFO", "socket"])
  func aBootIDThatIsNotARegularFileRefusesAtOnceAndHoldsNoLock(_ kind: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-bootid-kind")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    let standIn = scratch.appending("boot_id")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    if kind == "FIFO" {
      try #require(mkfifo(standIn, 0o600) == 0)
    } else {
      try UnixSocket.place(at: standIn)
    }
    let runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    let bound = [(source: standIn, target: "/proc/sys/kernel/random/boot_id")]
    let status = try MountNamespace.run(
      ["status", "--store", store, "--max-age", "1d", "--lock-timeout", "2s", "--json"],
      binding: bound, timeout: .seconds(60))
    #expect(!status.timedOut, "\(kind): the check waited on the boot id")
    #expect(status.exitCode == 1, "\(kind): \(status.standardOutput) \(status.standardError)")
    #expect(try status.jsonObject()["reasons"] as? [String] == ["boot_clock_unavailable"])
    let read = try MountNamespace.run(
      ["read", "--store", store, "--max-age", "1d", "token"], binding: bound,
      timeout: .seconds(60))
    #expect(!read.timedOut, "\(kind): the read waited on the boot id")
    #expect(read.exitCode == 1, "\(kind): \(read.standardError)")
    #expect(read.standardOutput.isEmpty, "no bytes are served")
    // The store is not left locked: a check outside the namespace is fresh.
    let back = try runner.run([
      "status", "--store", store, "--max-age", "1d", "--lock-timeout", "5s",
    ])
    #expect(back.exitCode == 0, "\(back.standardOutput) \(back.standardError)")
  }
}
