import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

@Suite struct MarkTests {
  @Test func observeOnAnAbsentRecordExits1AndCreatesNothing() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let missing = dir.appending("store")
    let run = runCommand(["mark", "observe", "--dir", missing, "--now", "5"])
    #expect(run.exitCode.rawValue == 1)
    #expect(run.standardOutput == "")
    #expect(run.standardError.hasPrefix("error: absent: "))
    #expect(!FileManager.default.fileExists(atPath: missing))
  }

  @Test func resetObserveAndShowPrintMarkAndGeneration() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let reset = runCommand(["mark", "reset", "--dir", dir.path, "--now", "100"])
    #expect(reset.exitCode == .success)
    #expect(reset.standardOutput == "mark 100 generation 1\n")
    let observe = runCommand([
      "mark", "observe", "--dir", dir.path, "--now", "50", "--now", "200", "--now", "150",
    ])
    #expect(
      observe.standardOutput
        == "mark 100 generation 1\nmark 200 generation 1\nmark 200 generation 1\n")
    let again = runCommand(["mark", "reset", "--dir", dir.path, "--now", "7", "--json"])
    #expect(again.standardOutput == "{\"mark\":7,\"generation\":2}\n")
    let show = runCommand(["mark", "show", "--dir", dir.path, "--unit", "ms", "--json"])
    #expect(show.exitCode == .success)
    #expect(show.standardOutput == "{\"mark\":7000,\"generation\":2}\n")
  }

  @Test func anUnreadableRecordExits1WithItsTypedReason() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    _ = runCommand(["mark", "reset", "--dir", dir.path, "--now", "100"])
    let record = dir.appending(FileClockMarkStore.recordFileName)
    let handle = try #require(FileHandle(forWritingAtPath: record))
    try handle.truncate(atOffset: 10)
    try handle.close()
    let run = runCommand(["mark", "observe", "--dir", dir.path, "--now", "500"])
    #expect(run.exitCode.rawValue == 1)
    #expect(run.standardError.hasPrefix("error: unreadable (truncated): "))
    #expect(try Data(contentsOf: URL(fileURLWithPath: record)).count == 10)
  }

  @Test func aDirectoryThatCannotBeOpenedExits74() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let file = dir.appending("plain-file")
    _ = FileManager.default.createFile(atPath: file, contents: Data([1]))
    let run = runCommand(["mark", "reset", "--dir", file, "--now", "1"])
    #expect(run.exitCode == .ioError)
    #expect(run.standardError == "error: store '\(file)' is not a directory\n")
    let nested = runCommand(["mark", "reset", "--dir", dir.appending("a/b"), "--now", "1"])
    #expect(nested.exitCode == .ioError)
  }

  @Test(arguments: [
    ["mark"],
    ["mark", "observe", "--now", "1"],
    ["mark", "observe", "--dir", "/tmp/x"],
    ["mark", "reset", "--dir", "/tmp/x", "--now", "1", "--now", "2"],
    ["mark", "show", "--dir", "/tmp/x", "--now", "1"],
    ["mark", "frobnicate", "--dir", "/tmp/x"],
    ["mark", "observe", "--dir", "/tmp/x", "--now", "1.5"],
    ["mark", "observe", "--dir", "/tmp/x", "--now", "1", "--unit", "h"],
  ])
  func usageErrorsExit64(arguments: [String]) {
    let run = runCommand(arguments)
    #expect(run.exitCode == .usage)
    #expect(run.standardError.hasPrefix("error: "))
    #expect(run.standardOutput == "")
  }

  @Test func helpGoesToStandardOutput() {
    let run = runCommand(["mark", "--help"])
    #expect(run.exitCode == .success)
    #expect(run.standardOutput.contains("USAGE: offline-ttl mark observe --store <dir>"))
  }
}

extension MarkTests {
  @Test func storeIsTheSpellingAndDirItsAlias() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let reset = runCommand(["mark", "reset", "--store", dir.path, "--now", "100"])
    #expect(reset.exitCode == .success)
    #expect(reset.standardOutput == "mark 100 generation 1\n")
    #expect(
      runCommand(["mark", "show", "--dir=\(dir.path)"]).standardOutput == reset.standardOutput)
    let both = runCommand(["mark", "show", "--store", dir.path, "--dir", dir.path])
    #expect(both.exitCode == .usage)
    #expect(both.standardError.hasPrefix("error: option '--dir' was given more than once\n"))
  }
}
