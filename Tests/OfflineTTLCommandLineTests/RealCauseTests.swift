import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

/// Whether `chattr +i` works here (root or CAP_LINUX_IMMUTABLE, and a file system with the flag).
let chattrImmutableWorks: Bool = {
  guard let directory = try? TemporaryStoreDirectory(prefix: "chattr-probe") else { return false }
  defer { directory.remove() }
  let file = directory.appending("probe")
  guard FileManager.default.createFile(atPath: file, contents: Data()) else { return false }
  let works = shell(["chattr", "+i", file]) == 0
  if works { _ = shell(["chattr", "-i", file]) }
  return works
}()

/// Runs a command through `/usr/bin/env`; its exit status, or -1 when it cannot start.
func shell(_ arguments: [String]) -> Int32 {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = arguments
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  guard (try? process.run()) != nil else { return -1 }
  process.waitUntilExit()
  return process.terminationStatus
}

/// Every message names the real cause, with the right exit status (one test per kind, with
/// further members of each kind).
@Suite struct RealCauseTests {
  let clock = ManualWallClock(storeCommandStart)

  func run(_ arguments: [String]) -> CommandRun { runCommand(arguments, clock: clock) }

  @Test func aSymbolicLinkAsTheStoreIsNamedByEveryStoreCommand() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let link = directory.appending("link")
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: directory.appending("store"))
    let message = "error: store '\(link)' is a symbolic link (symbolic links are not followed)\n"
    for arguments in [
      ["status", "--store", link, "--max-age", "7d"],
      ["read", "--store", link, "--max-age", "7d", "token"],
      ["sign-in", "--store", link], ["mark", "show", "--store", link],
      ["mark", "reset", "--store", link, "--now", "5"],
    ] {
      let result = run(arguments)
      #expect(result.exitCode == .ioError, "\(arguments)")
      #expect(result.standardError == message, "\(arguments)")
    }
  }

  @Test func aSymbolicLinkAsTheCacheDirectoryExits74NamingIt() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    try FileManager.default.moveItem(atPath: store + "/cache", toPath: directory.appending("real"))
    try FileManager.default.createSymbolicLink(
      atPath: store + "/cache", withDestinationPath: directory.appending("real"))
    let message =
      "error: store '\(store)' cannot be used: the cache directory '\(store)/cache' is a"
      + " symbolic link (symbolic links are not followed)\n"
    let status = run(["status", "--store", store, "--max-age", "7d"])
    #expect(status.exitCode == .ioError)
    #expect(status.standardError == message)
    #expect(status.standardOutput.hasPrefix("status: expired\nreasons: item_unreadable\n"))
    let read = run(["read", "--store", store, "--max-age", "7d", "--json", "token"])
    #expect(read.exitCode == .ioError)
    #expect(read.standardError == message)
    #expect(read.standardOutput.hasPrefix(#"{"status":"expired","reasons":["item_unreadable"]"#))
  }

  @Test func aLockFileThatIsNotAFileIsALockProblemExit74() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    try FileManager.default.removeItem(atPath: store + "/clock-mark.lock")
    try FileManager.default.createDirectory(
      atPath: store + "/clock-mark.lock", withIntermediateDirectories: false)
    let status = run(["status", "--store", store, "--max-age", "7d"])
    #expect(status.exitCode == .ioError)
    #expect(
      status.standardError.hasPrefix(
        "error: store '\(store)' cannot be used: the clock mark's lock cannot be used:"
          + " lock_failed: "))
    #expect(status.standardError.contains("clock-mark.lock"))
    let mark = run(["mark", "show", "--store", store])
    #expect(mark.exitCode == .ioError)
    #expect(mark.standardError.hasPrefix("error: lock_failed: "))
    let read = run(["read", "--store", store, "--max-age", "7d", "--json", "token"])
    #expect(read.exitCode == .ioError)
    #expect(read.standardOutput.contains(#""mark_error":"lock_failed: "#))
  }

  @Test(
    .enabled(
      if: chattrImmutableWorks,
      "chattr +i is not available here (needs root or CAP_LINUX_IMMUTABLE and a file system with the flag)"
    ))
  func anImmutableMarkIsNotPersistedNotUnreadable() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    #expect(shell(["chattr", "+i", store + "/clock-mark"]) == 0)
    defer { _ = shell(["chattr", "-i", store + "/clock-mark"]) }
    clock.advance(by: .seconds(5))
    let status = run(["status", "--store", store, "--max-age", "7d"])
    #expect(status.exitCode == .expired)
    #expect(status.standardOutput.contains("reasons: mark_not_persisted\n"))
    #expect(status.standardOutput.contains("mark_error: write_failed: "))
    #expect(status.standardOutput.contains("can be read but not opened for writing"))
    // It can still be read.
    let show = run(["mark", "show", "--store", store])
    #expect(show.exitCode == .success)
    let observe = run(["mark", "observe", "--store", store, "--now", "1"])
    #expect(observe.exitCode == .expired)
    #expect(observe.standardError.hasPrefix("error: write_failed: "))
  }

  @Test func aNameTooLongIsENAMETOOLONGNotMissing() {
    let long = "/tmp/" + String(repeating: "a", count: 300)
    for arguments in [
      ["status", "--store", long, "--max-age", "7d"], ["sign-in", "--store", long],
      ["mark", "show", "--store", long],
    ] {
      let result = run(arguments)
      #expect(result.exitCode == .ioError, "\(arguments)")
      #expect(
        result.standardError
          == "error: store path '\(long)' is too long for the file system: ENAMETOOLONG"
          + " (File name too long)\n", "\(arguments)")
    }
    let missing = run(["status", "--store", "/tmp/offline-ttl-no-such-store", "--max-age", "7d"])
    #expect(
      missing.standardError
        == "error: store directory '/tmp/offline-ttl-no-such-store' does not exist\n")
    let throughFile = run(["status", "--store", "/etc/hostname/store", "--max-age", "7d"])
    #expect(throughFile.exitCode == .ioError)
    #expect(throughFile.standardError.contains("ENOTDIR (Not a directory)"))
  }

  /// An input over the 1 GiB item maximum is refused from its size before a byte is read: a
  /// sparse file of 1 GiB + 1 byte and one of 1 TiB (which a whole read could never allocate).
  @Test(arguments: [Int64(1 << 30) + 1, Int64(1) << 40])
  func aPutFileOverTheItemMaximumIsRefusedBeforeItIsRead(size: Int64) throws {
    let directory = try TemporaryStoreDirectory(prefix: "cli-put-large")
    defer { directory.remove() }
    let store = directory.appending("store")
    let input = directory.appending("large.bin")
    #expect(FileManager.default.createFile(atPath: input, contents: nil))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: input))
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
    let result = run(["sign-in", "--store", store, "--put", "k=\(input)"])
    #expect(result.exitCode == .ioError)
    #expect(
      result.standardError
        == "error: cannot read \(input.debugDescription) for item k: \(size) bytes is larger than"
        + " the 1 GiB maximum of an item (EFBIG (File too large))\n")
    #expect(!FileManager.default.fileExists(atPath: store), "nothing was committed")
  }

  /// What a message quotes cannot take over the terminal: a key with a right-to-left override
  /// (a valid key, so it reaches the store), a store path with an ANSI escape sequence, a newline
  /// that would forge a second `error:` line, and other format characters.
  @Test func quotedKeysAndPathsAreEscapedInErrorMessages() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let reversed = run(["read", "--store", store, "--max-age", "7d", "a\u{202E}b"])
    #expect(reversed.exitCode == .unavailable)
    #expect(reversed.standardError == "error: no item with key \"a\\u{202E}b\"\n")
    for (raw, shown) in [
      ("\u{1B}[31m", "\\u{1B}[31m"), ("x\nerror: forged", "x\\u{A}error: forged"),
      ("\u{2066}\u{200F}", "\\u{2066}\\u{200F}"), ("\u{2028}", "\\u{2028}"),
    ] {
      let result = run(["status", "--store", "/tmp/offline-ttl-absent-\(raw)", "--max-age", "7d"])
      #expect(result.exitCode == .ioError)
      #expect(
        result.standardError
          == "error: store directory '/tmp/offline-ttl-absent-\(shown)' does not exist\n")
    }
    #expect(TerminalText.escaped("café ✓ 日本") == "café ✓ 日本", "printable text is unchanged")
  }

  /// Items written while the clock was a year ahead: after the clock is corrected, a plain
  /// sign-in keeps them with their own times, so they stay `item_from_future`; the refusal says
  /// when and how to recover, and a sign-in that writes the item again does.
  @Test func anItemFromAFastClockNamesItsTimeAndTheWayBack() throws {
    let year = Duration.seconds(365 * 86_400)
    clock.advance(by: year)
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let written = clock.now()
    clock.moveBack(by: year)
    #expect(run(["sign-in", "--store", store]).exitCode == .success)
    let refused = run(["read", "--store", store, "--max-age", "7d", "token"])
    #expect(refused.exitCode == .expired)
    #expect(
      refused.standardError
        == "error: refused: expired: item_from_future; an item is dated after now (the newest at"
        + " \(written.rfc3339)): it was written while the wall clock was ahead, and stays refused"
        + " until an online sign-in writes it again (sign-in --put)\n")
    #expect(
      run(["sign-in", "--store", store, "--put", "token=\(directory.appending("input-token"))"])
        .exitCode == .success)
    #expect(run(["read", "--store", store, "--max-age", "7d", "token"]).exitCode == .success)
  }

  /// Items written at the right time, read with the clock set back a day: the item is dated
  /// after now because the clock is behind, and the refusal says that, not that the clock was
  /// ahead when the item was written (outside tester, session 12).
  @Test func anItemDatedAfterAClockSetBackBlamesTheClockNow() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let written = clock.now()
    clock.moveBack(by: .seconds(86_400))
    let refused = run(["read", "--store", store, "--max-age", "7d", "token"])
    #expect(refused.exitCode == .expired)
    #expect(refused.standardError.contains("item_from_future"), "\(refused.standardError)")
    #expect(refused.standardError.contains("clock_behind_mark"), "\(refused.standardError)")
    #expect(
      refused.standardError.contains(
        "; an item is dated after now (the newest at \(written.rfc3339)): the wall clock reads"
          + " earlier than when it was written (and than the clock mark): set it right, or sign"
          + " in online"), "\(refused.standardError)")
    #expect(!refused.standardError.contains("was ahead"), "\(refused.standardError)")
  }

  @Test func anUnreadablePutFileNamesItsReason() throws {
    let directory = try TemporaryStoreDirectory(prefix: "cli-put")
    defer { directory.remove() }
    let store = directory.appending("store")
    let missing = run(["sign-in", "--store", store, "--put", "k=/offline-ttl-missing"])
    #expect(missing.exitCode == .ioError)
    #expect(
      missing.standardError
        == "error: cannot read \"/offline-ttl-missing\" for item k: ENOENT (No such file or directory)\n"
    )
    let folder = run(["sign-in", "--store", store, "--put", "k=\(directory.path)"])
    #expect(folder.standardError.hasSuffix(": EISDIR (Is a directory)\n"))
    // Nothing was committed either time.
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test(arguments: [
    ([String: String](), "/tmp"), (["TMPDIR": ""], "/tmp"), (["TMPDIR": "/var/tmp/"], "/var/tmp"),
    (["TMPDIR": "/"], "/"),
  ])
  func anEmptyTMPDIRIsUnset(environment: [String: String], expected: String) {
    #expect(Demo.temporaryDirectory(environment) == expected)
  }

  @Test(arguments: ["86000d", "100000d", "106751d"])
  func aDemoMaxAgeTooLongForItsClockIsAUsageError(maxAge: String) {
    // 2026-11-30, when the issue was filed: 86000d from there is past the year 2262.
    let now = WallClockInstant(nanosecondsSinceEpoch: 1_796_000_000_000_000_000)
    let result = runCommand(["demo", "--max-age", maxAge], clock: ManualWallClock(now))
    #expect(result.exitCode == .usage)
    #expect(result.standardError.hasPrefix("error: --max-age: \(maxAge) is too long for the demo"))
  }

  @Test func escapedFieldNamesInABatchLineAreTheSameNames() {
    let run = runCommand(
      ["evaluate", "--batch"],
      input: #"{"written_at":[100],"n\u006fw":190,"m\u0061rk":200,"max\u005Fage":1000}"# + "\n"
        + #"{"\u0077ritten_at":[100],"now":1100,"mark":null,"max_age":1000,"x\"y":1}"# + "\n"
        + #"{"written_at":[100],"no\u0077x":1,"now":1,"mark":null,"max_age":1}"# + "\n")
    #expect(run.exitCode == .success)
    #expect(
      run.standardOutput == """
        {"status":"expired","mark":200,"reasons":["clock_behind_mark"]}
        {"status":"fresh","mark":1100,"reasons":[]}
        {"status":"expired","mark":1,"reasons":["item_from_future"]}

        """)
  }

  @Test func readJSONPrintsTheDecisionOnAMissingKey() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let result = run([
      "read", "--store", directory.appending("store"), "--max-age", "7d", "--json", "other",
    ])
    #expect(result.exitCode == .unavailable)
    #expect(result.standardOutput.hasPrefix(#"{"status":"fresh","reasons":[]"#))
    #expect(result.standardOutput.hasSuffix(#""key":"other","item":null}"# + "\n"))
    #expect(result.standardError == "error: no item with key \"other\"\n")
  }

  @Test func readJSONPrintsTheDecisionOnAnUnreadableItem() throws {
    let directory = try signedInStore(["token": "t"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    // Corrupt every item file under the cache (the index stays), keeping their sizes.
    let cache = store + "/cache"
    let enumerator = FileManager.default.enumerator(atPath: cache)
    while let name = enumerator?.nextObject() as? String {
      let path = cache + "/" + name
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
        !isDirectory.boolValue, !name.contains("index")
      else { continue }
      let size = (try? Data(contentsOf: URL(fileURLWithPath: path)).count) ?? 0
      try Data(repeating: 0xFF, count: size).write(to: URL(fileURLWithPath: path))
    }
    let result = run(["read", "--store", store, "--max-age", "7d", "--json", "token"])
    #expect(result.exitCode == .expired)
    #expect(result.standardOutput.hasPrefix(#"{"status":"expired","reasons":["item_unreadable"]"#))
    #expect(result.standardOutput.contains(#""key":"token""#))
    #expect(result.standardError.hasPrefix("error: refused: expired: "))
  }

  @Test func agesAreMeasuredFromTheTimeThatDecided() throws {
    let bootClock = stillBootClock()
    let directory = try TemporaryStoreDirectory(prefix: "cli-age")
    defer { directory.remove() }
    let store = directory.appending("store")
    let file = directory.appending("in")
    try Data("t".utf8).write(to: URL(fileURLWithPath: file))
    _ = runCommand(
      ["sign-in", "--store", store, "--put", "k=\(file)"], clock: clock, bootClock: bootClock)
    // The wall clock is held at +1s while the boot clock proves 8 days passed.
    clock.advance(by: .seconds(1))
    bootClock.advance(by: .seconds(8 * 86_400))
    let result = runCommand(
      ["status", "--store", store, "--max-age", "7d"], clock: clock, bootClock: bootClock)
    #expect(result.exitCode == .expired)
    #expect(result.standardOutput.contains("too_old"))
    // Not "age 1s" beside too_old: the age is from the effective time (the floor).
    #expect(result.standardOutput.contains("(age 8d)\n"))
  }
}

/// A usage error is reported (exit 64, `error: ` and the usage) before any store is looked at
/// (which would exit 74): for every subcommand and every option of it that takes a value, a bad
/// value on a missing store and on an insecure one, and the store is left as it was.
extension RealCauseTests {
  /// A value each option refuses. A new option that takes a value is listed in
  /// ``optionsTakingValues`` at once, and fails the test until it has an entry here.
  static let badValues: [String: String] = [
    "max-age": "7 days", "clock-tolerance": "soon", "backend": "cloud", "seal": "nowhere",
    "put": "no-equals-sign", "tpm": "nonsense", "now": "yesterday", "unit": "weeks",
    "written-at": "noon", "mark": "high", "server-time": "yesterday",
    "server-time-uncertainty": "a while", "tpm-timeout": "soon", "lock-timeout": "2h",
  ]

  /// Every subcommand × every option it declares that takes a value, from the registry
  /// (`--store` aside: any text is a path, and its problems are the store's).
  static let optionsTakingValues: [String] = SubcommandRegistry.all.flatMap { subcommand in
    subcommand.configuration.options.filter { $0.valueName != nil && $0.name != "store" }.map {
      subcommand.configuration.name + " --" + $0.name
    }
  }

  /// Arguments that are valid but for the store, for each subcommand.
  static func validArguments(_ subcommand: String, store: String) -> [String]? {
    switch subcommand {
    case "status": ["status", "--store", store, "--max-age", "7d"]
    case "read": ["read", "--store", store, "--max-age", "7d", "token"]
    case "sign-in": ["sign-in", "--store", store]
    case "mark": ["mark", "reset", "--store", store, "--now", "5"]
    case "evaluate": ["evaluate", "--now", "5", "--max-age", "7d", "--written-at", "1"]
    case "demo": ["demo"]
    default: nil
    }
  }

  /// A scratch directory with a missing store path and an insecure store (mode 0777), the
  /// directory `demo` would make its store in, and what each run must leave exactly as it was.
  struct UsageScene {
    let directory: TemporaryStoreDirectory
    var missing: String { directory.appending("missing") }
    var insecure: String { directory.appending("insecure") }

    init() throws {
      directory = try TemporaryStoreDirectory(prefix: "usage-before-store")
      try FileManager.default.createDirectory(
        atPath: insecure + "/cache", withIntermediateDirectories: true)
      try Data("marker".utf8).write(to: URL(fileURLWithPath: insecure + "/clock-mark"))
      try FileManager.default.setAttributes(
        [.posixPermissions: 0o777], ofItemAtPath: insecure)
    }

    /// Every path under the scratch directory with its size and mode.
    func snapshot() -> [String: String] {
      var result: [String: String] = [:]
      for name in FileManager.default.subpaths(atPath: directory.path) ?? [] {
        let attributes = try? FileManager.default.attributesOfItem(
          atPath: directory.appending(name))
        result[name] =
          "\(attributes?[.size] ?? 0) \(attributes?[.posixPermissions] ?? 0)"
      }
      return result
    }

    /// Runs the command with `TMPDIR` in the scratch directory (so `demo` would make its store
    /// there) and a still clock.
    func run(_ arguments: [String]) -> CommandRun {
      let context = CommandContext(
        standardOutput: OutputSink(), standardError: OutputSink(),
        standardInput: InputSource(text: ""), clock: ManualWallClock(storeCommandStart),
        environment: ["TMPDIR": directory.path], bootClock: stillBootClock())
      let code = OfflineTTLCommand.run(arguments, context: context)
      return CommandRun(
        exitCode: code, standardOutput: context.standardOutput.capturedText,
        standardError: context.standardError.capturedText)
    }

    /// Expects `arguments` to be a usage error that changed nothing.
    func expectUsageError(
      _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
      let before = snapshot()
      let result = run(arguments)
      #expect(
        result.exitCode == .usage, "\(arguments): \(result.standardError)",
        sourceLocation: sourceLocation)
      #expect(
        result.standardError.hasPrefix("error: "), "\(arguments): \(result.standardError)",
        sourceLocation: sourceLocation)
      if let configuration = SubcommandRegistry.subcommand(named: arguments[0])?.configuration {
        #expect(
          result.standardError.hasSuffix(HelpFormatter.usageHint(for: configuration)),
          "\(arguments): no usage: \(result.standardError)", sourceLocation: sourceLocation)
      }
      #expect(result.standardOutput.isEmpty, "\(arguments)", sourceLocation: sourceLocation)
      #expect(
        snapshot() == before, "\(arguments) changed the store", sourceLocation: sourceLocation)
    }
  }

  @Test(arguments: optionsTakingValues)
  func aBadOptionValueIsAUsageErrorBeforeTheStoreIsLookedAt(_ subcommandAndOption: String) throws {
    let parts = subcommandAndOption.split(separator: " ").map(String.init)
    let (subcommand, option) = (parts[0], String(parts[1].dropFirst(2)))
    let bad = try #require(Self.badValues[option], "no bad value known for --\(option)")
    let scene = try UsageScene()
    defer { scene.directory.remove() }
    for store in [scene.missing, scene.insecure] {
      var arguments = try #require(
        Self.validArguments(subcommand, store: store), "no arguments known for \(subcommand)")
      if let index = arguments.firstIndex(of: "--" + option) {
        arguments.removeSubrange(index...(index + 1))
      }
      scene.expectUsageError(arguments + ["--" + option, bad])
    }
  }

  /// Usage errors that depend on several options, or on an option and a positional, are
  /// judged before the store too.
  @Test func aUsageErrorAcrossOptionsComesBeforeTheStoreToo() throws {
    let scene = try UsageScene()
    defer { scene.directory.remove() }
    for store in [scene.missing, scene.insecure] {
      for arguments in [
        ["sign-in", "--store", store, "--server-time-uncertainty", "1s"],
        ["sign-in", "--store", store, "--put", "a=/x", "--put", "a=/y"],
        ["status", "--store", store],
        ["read", "--store", store, "--max-age", "7d", "bad/key"],
        ["mark", "reset", "--store", store, "--now", "5", "--now", "6"],
        ["mark", "show", "--store", store, "--now", "5"],
        ["mark", "observe", "--store", store],
        ["mark", "observe", "--store", store, "--now", "9223372036854775807"],
        ["mark", "sideways", "--store", store, "--now", "5"],
      ] {
        scene.expectUsageError(arguments)
      }
    }
    #if SecretService
      scene.expectUsageError(
        [
          "status", "--store", scene.insecure, "--max-age", "7d", "--backend", "secret-service",
          "--seal", "file:/nowhere",
        ])
    #endif
  }
}
