import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

@Suite struct SignInTests {
  @Test func createsTheStoreResetsTheMarkAndWritesItems() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let input = directory.appending("in")
    try Data("hello".utf8).write(to: URL(fileURLWithPath: input))
    let store = directory.appending("store")
    let clock = ManualWallClock(storeCommandStart)
    let run = runCommand(
      ["sign-in", "--store", store, "--put", "a=\(input)", "--put", "b=\(input)"], clock: clock)
    #expect(run.exitCode == .success)
    #expect(
      run.standardOutput
        == "signed in: generation 1, mark 2023-11-14T22:13:20.000000000Z,"
        + " wrote 2 items at 2023-11-14T22:13:20.000000000Z\n")
    let item = try DirectoryCacheStore(atPath: store).item(forKey: CacheItemKey("a"))
    #expect(item?.payload == Data("hello".utf8))
    #expect(item?.writtenAt == storeCommandStart)
  }

  @Test func secondSignInLowersTheMarkInANewGeneration() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let clock = ManualWallClock(storeCommandStart)
    _ = runCommand(["sign-in", "--store", directory.path], clock: clock)
    clock.moveBack(by: .seconds(60))
    let run = runCommand(["sign-in", "--store", directory.path, "--json"], clock: clock)
    let expected: String = [
      #"{"store":"\#(directory.path)","generation":2,"mark":"2023-11-14T22:12:20.000000000Z","#,
      #""mark_ns":1699999940000000000,"written_at":null,"written_at_ns":null,"written":[]}"#, "\n",
    ].joined()
    #expect(run.standardOutput == expected)
  }

  @Test func invalidKeyExits64AndWritesNothing() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let run = runCommand(
      ["sign-in", "--store", directory.path, "--put", "a/b=/etc/hostname"],
      clock: UnimplementedWallClock())
    #expect(run.exitCode == .usage)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
  }

  @Test func unreadableInputExits74AndWritesNothing() throws {
    let directory = try TemporaryStoreDirectory()
    defer { directory.remove() }
    let run = runCommand(
      ["sign-in", "--store", directory.path, "--put", "k=/nonexistent/file"],
      clock: UnimplementedWallClock())
    #expect(run.exitCode == .ioError)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
  }

  @Test func missingParentExits74() {
    let run = runCommand(
      ["sign-in", "--store", "/nonexistent/parent/store"], clock: ManualWallClock(storeCommandStart)
    )
    #expect(run.exitCode == .ioError)
    #expect(run.standardError.hasPrefix("error: sign-in failed: "))
  }
}
