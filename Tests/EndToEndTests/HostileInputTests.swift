import Foundation
import Testing

/// Input a careless or hostile user gives the built binary (found in QA): each is refused with
/// the documented exit code, and nothing in the store is written.
@Suite struct HostileInputTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// A fresh scratch directory (not created) under the temporary directory.
  private func scratchPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.path + "/offline-ttl-e2e-hostile-\(name)-"
      + UUID().uuidString
  }

  @Test func anArgumentThatIsNotUTF8IsAUsageErrorAndWritesNothing() throws {
    let store = scratchPath("utf8")
    let input = try InputFile("payload")
    defer {
      input.remove()
      try? FileManager.default.removeItem(atPath: store)
    }
    // Decoded, the byte 0xFF would become U+FFFD: a different key than the one given. The shell
    // passes the raw byte (Foundation's Process takes only Strings).
    let run = try binary.run(
      ["sign-in", "--store", store],
      launcher: [
        "sh", "-c", #"exe="$1"; shift; exec "$exe" "$@" --put "$(printf '\377')=$0""#,
        input.url.path,
      ])
    #expect(run.exitCode == 64)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError.hasPrefix(
        "error: argument 5 is not valid UTF-8 (keys and paths must be UTF-8)\nusage: "))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func aDecomposedKeyIsAUsageErrorSoNoItemEscapesTheAgeCheck() throws {
    // "e" + U+0301 and U+00E9 are one key to Swift but two files: the older file was hidden from
    // the index (fresh, item_count 1) and still readable past its max age.
    let store = scratchPath("nfd")
    let input = try InputFile("payload")
    defer {
      input.remove()
      try? FileManager.default.removeItem(atPath: store)
    }
    let run = try binary.run(["sign-in", "--store", store, "--put", "e\u{301}=\(input.url.path)"])
    #expect(run.exitCode == 64)
    #expect(run.standardOutput == "")
    #expect(run.standardError.contains("normalization form C (NFC)"))
    #expect(!FileManager.default.fileExists(atPath: store))
    let read = try binary.run(["read", "--store", store, "--max-age", "7d", "e\u{301}"])
    #expect(read.exitCode == 64)
  }

  @Test func aStoreThatIsASymbolicLinkCannotBeOpenedAndExits74() throws {
    let target = scratchPath("target")
    let link = scratchPath("link")
    let input = try InputFile("payload")
    defer {
      input.remove()
      try? FileManager.default.removeItem(atPath: link)
      try? FileManager.default.removeItem(atPath: target)
    }
    let signIn = try binary.run(["sign-in", "--store", target, "--put", "token=\(input.url.path)"])
    #expect(signIn.exitCode == 0)
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    let before = try FileManager.default.contentsOfDirectory(atPath: target + "/cache/items")
    let message = "error: store '\(link)' is a symbolic link (symbolic links are not followed)\n"
    let status = try binary.run(["status", "--store", link, "--max-age", "7d"])
    #expect(status.exitCode == 74)
    #expect(status.standardOutput == "")
    #expect(status.standardError == message)
    let read = try binary.run(["read", "--store", link, "--max-age", "7d", "token"])
    #expect(read.exitCode == 74)
    #expect(read.standardOutput == "")
    #expect(read.standardError == message)
    #expect(try FileManager.default.contentsOfDirectory(atPath: target + "/cache/items") == before)
  }

  @Test func theSameKeyPutTwiceInOneSignInIsAUsageErrorAndWritesNothing() throws {
    let store = scratchPath("duplicate")
    let first = try InputFile("first")
    let second = try InputFile("second")
    defer {
      first.remove()
      second.remove()
      try? FileManager.default.removeItem(atPath: store)
    }
    let run = try binary.run([
      "sign-in", "--store", store, "--put", "token=\(first.url.path)", "--put",
      "token=\(second.url.path)",
    ])
    #expect(run.exitCode == 64)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError.hasPrefix("error: --put: key \"token\" given more than once\nusage: "))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test(arguments: ["0s", "1h", "23h59m59s"])
  func aDemoMaxAgeTooShortForItsStoryIsAUsageErrorNotABug(maxAge: String) throws {
    let run = try binary.run(["demo", "--max-age", maxAge])
    #expect(run.exitCode == 64)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError.hasPrefix(
        "error: --max-age: the demo needs at least 1d (its story checks at t0+1h and t0+1d),"
          + " got \(maxAge)\nusage: "))
  }

  @Test func evaluateWithStandardOutputClosedExits74AsItsHelpSays() throws {
    let closed = try binary.run(
      ["evaluate", "--written-at", "100", "--now", "190", "--max-age", "1000"],
      launcher: ["sh", "-c", #"exe="$1"; shift; exec "$exe" "$@" >&-"#, "sh"])
    #expect(closed.exitCode == 74)
    #expect(closed.standardError == "error: cannot write standard output\n")
    let help = try binary.run(["evaluate", "--help"])
    #expect(help.exitCode == 0)
    #expect(
      help.standardOutput.contains(
        "  74        standard input could not be read, or standard output not written."))
  }

  @Test func aDemoWithoutATemporaryDirectorySaysWhyInOneLineAndExits74() throws {
    let missing = scratchPath("no-tmp")
    let run = try binary.run(["demo"], environment: ["TMPDIR": missing])
    #expect(run.exitCode == 74)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError
        == "error: cannot create a temporary store in \(missing): No such file or directory\n")
  }

  @Test func aDemoMaxAgeOfOneDayTellsTheWholeStory() throws {
    let run = try binary.run(["demo", "--max-age", "1d", "--json"])
    #expect(run.exitCode == 0)
    #expect(run.standardOutput.split(separator: "\n").count == 11)
  }
}

/// A file of bytes to `--put`, in a scratch directory of its own.
private struct InputFile {
  let directory: URL
  let url: URL

  init(_ text: String) throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("offline-ttl-e2e-hostile-input-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    url = directory.appendingPathComponent("file")
    try Data(text.utf8).write(to: url)
  }

  func remove() {
    try? FileManager.default.removeItem(at: directory)
  }
}
