import Foundation
import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

/// `--version`, `help <subcommand>`, `help --man` and `help --completion`, and the agreement
/// of the version constant, `--version` and the top entry of CHANGELOG.md.
@Suite struct HelpCommandTests {
  @Test func versionPrintsTheLibraryConstant() {
    let run = runCommand(["--version"])
    #expect(run.exitCode == .success)
    #expect(run.standardOutput == "offline-ttl \(OfflineTTLVersion.current)\n")
    #expect(run.standardError == "")
    #expect(runCommand(["--version", "x"]).exitCode == .usage)
  }

  @Test func theChangelogTheConstantAndVersionAgree() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let changelog = try String(
      contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
    // The first "## [x.y.z]" heading is the current version.
    let heading = try #require(
      changelog.split(separator: "\n").first { $0.hasPrefix("## [") && !$0.hasPrefix("## [Un") })
    let version = heading.dropFirst(4).prefix { $0 != "]" }
    #expect(String(version) == OfflineTTLVersion.current)
    #expect(
      runCommand(["--version"]).standardOutput == "offline-ttl \(version)\n",
      "CHANGELOG.md's top entry, OfflineTTLVersion.current and --version must agree")
    let parts = OfflineTTLVersion.current.split(separator: ".")
    #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil })
  }

  @Test func helpOfASubcommandIsItsOwnHelp() {
    for subcommand in SubcommandRegistry.all {
      let name = subcommand.configuration.name
      let viaHelp = runCommand(["help", name])
      #expect(viaHelp.exitCode == .success)
      #expect(viaHelp.standardOutput == runCommand([name, "--help"]).standardOutput)
      #expect(viaHelp.standardOutput.contains("EXIT STATUS:\n"), "\(name)")
      #expect(viaHelp.standardOutput.contains("EXAMPLES:\n"), "\(name)")
    }
  }

  @Test(arguments: [
    (["help", "frobnicate"], "error: help: unknown subcommand 'frobnicate'\n"),
    (["help", "status", "read"], "error: help takes one subcommand name, --man, or"),
    (["help", "--completion"], "error: help --completion needs one shell: bash or zsh\n"),
    (["help", "--completion", "fish"], "error: help --completion: unknown shell 'fish'"),
  ])
  func helpMisuseIsAUsageError(arguments: [String], message: String) {
    let run = runCommand(arguments)
    #expect(run.exitCode == .usage)
    #expect(run.standardOutput == "")
    #expect(run.standardError.hasPrefix(message))
  }

  @Test func toolHelpMentionsVersionAndHelpForms() {
    let text = runCommand(["help"]).standardOutput
    #expect(text.contains("--version"))
    #expect(text.contains("help <subcommand>"))
    #expect(text.contains("help --man"))
  }
}

/// The option registry: one declaration per name, which the parser, help, manual page and
/// completions all read.
@Suite struct OptionRegistryTests {
  static let configurations = SubcommandRegistry.all.map { $0.configuration }

  @Test func anOptionNameMeansOneThingEverywhere() {
    var seen: [String: OptionSpec] = [:]
    for configuration in Self.configurations {
      var spellings: Set<String> = ["help", "h"]
      for option in configuration.options {
        for spelling in [option.name] + option.aliases {
          #expect(
            spellings.insert(spelling).inserted,
            "\(configuration.name): --\(spelling) declared twice")
        }
        if let earlier = seen[option.name] {
          #expect(earlier.valueName == option.valueName, "--\(option.name): value differs")
          #expect(earlier.kind == option.kind, "--\(option.name): kind differs")
        }
        seen[option.name] = option
      }
    }
  }

  @Test func everyStoreSubcommandSpellsTheStoreAsStore() {
    for name in ["status", "read", "sign-in", "mark"] {
      let configuration = SubcommandRegistry.subcommand(named: name)!.configuration
      #expect(configuration.option(named: "store") != nil, "\(name)")
      #expect(configuration.usage.allSatisfy { $0.contains("--store <dir>") }, "\(name)")
    }
  }

  /// The usage lines (also the manual page's SYNOPSIS) name every option a subcommand takes, or
  /// say `[options]`: an option that only the OPTIONS list shows (`--seal`, `--tpm`,
  /// `--backend`) is not hidden by a usage line that looks complete.
  @Test func everyUsageLineNamesEveryOptionOrSaysOptions() {
    for subcommand in SubcommandRegistry.all {
      let configuration = subcommand.configuration
      if configuration.usage.contains(where: { $0.contains("[options]") }) { continue }
      for option in configuration.options {
        #expect(
          configuration.usage.contains { $0.contains("--\(option.name)") },
          "\(configuration.name): --\(option.name) is in no usage line")
      }
    }
  }

  @Test func everyDurationOptionTakesUnits() {
    // Options whose value is a duration say so in their placeholder.
    for configuration in Self.configurations {
      for option in configuration.options where option.valueName?.contains("duration") == true {
        #expect(
          option.name == "max-age" || option.name == "clock-tolerance"
            || option.name == "server-time-uncertainty" || option.name == "tpm-timeout"
            || option.name == "lock-timeout")
      }
    }
  }

  @Test func readingAnUndeclaredOptionIsCaught() async {
    // The reader records what the subcommand declares; reading anything else stops the process
    // (a misspelling cannot silently read nothing).
    let parsed = try? ArgumentReader.read(["--json"], for: Status.configuration)
    guard case .arguments(let arguments)? = parsed else {
      Issue.record("expected arguments")
      return
    }
    #expect(arguments.declared?.contains("json") == true)
    #expect(arguments.declared?.contains("put") == false)
    await #expect(processExitsWith: .failure) {
      let parsed = try? ArgumentReader.read([], for: Status.configuration)
      if case .arguments(let arguments)? = parsed { _ = arguments.values(.put) }
    }
  }
}
