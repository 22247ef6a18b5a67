import Testing

@testable import OfflineTTLCommandLine

@Suite struct OfflineTTLCommandTests {
  @Test(arguments: [["--help"], ["-h"], ["help"]])
  func toolHelpGoesToStandardOutputWithExitZero(arguments: [String]) {
    let run = runCommand(arguments)
    #expect(run.exitCode == .success)
    #expect(run.standardOutput.hasPrefix("OVERVIEW: "))
    #expect(run.standardOutput.contains("\n  evaluate  "))
    #expect(run.standardError == "")
  }

  @Test func everyRegisteredSubcommandHasHelpOnStandardOutput() {
    for subcommand in SubcommandRegistry.all {
      let name = subcommand.configuration.name
      for flag in ["--help", "-h"] {
        let run = runCommand([name, flag])
        #expect(run.exitCode == .success, "\(name) \(flag)")
        #expect(run.standardOutput.contains("USAGE: offline-ttl \(name)"), "\(name) \(flag)")
        #expect(run.standardError == "")
      }
    }
  }

  @Test func registeredNamesAreUnique() {
    let names = SubcommandRegistry.all.map { $0.configuration.name }
    #expect(Set(names).count == names.count)
  }

  @Test func missingSubcommandIsAUsageError() {
    let run = runCommand([])
    #expect(run.exitCode == .usage)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError == """
        error: missing subcommand
        usage: offline-ttl <subcommand> [options]
        See 'offline-ttl --help'.

        """)
  }

  @Test func unknownSubcommandAndUnknownToolOptionAreUsageErrors() {
    #expect(
      runCommand(["frobnicate"]).standardError.hasPrefix("error: unknown subcommand 'frobnicate'\n")
    )
    #expect(
      runCommand(["--verbose"]).standardError.hasPrefix("error: unknown option '--verbose'\n"))
    #expect(runCommand(["frobnicate"]).exitCode == .usage)
  }

  @Test func subcommandUsageErrorPrintsErrorThenUsageOnStandardError() {
    let run = runCommand(["evaluate", "--bogus"])
    #expect(run.exitCode == .usage)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError
        == "error: unknown option '--bogus'\n"
        + HelpFormatter.usageHint(for: Evaluate.configuration))
  }

  @Test func exitCodeConstantsMatchTheConventions() {
    #expect(ExitCode.fresh.rawValue == 0)
    #expect(ExitCode.expired.rawValue == 1)
    #expect(ExitCode.unavailable.rawValue == 2)
    #expect(ExitCode.usage.rawValue == 64)
    #expect(ExitCode.dataError.rawValue == 65)
    #expect(ExitCode.ioError.rawValue == 74)
  }
}
