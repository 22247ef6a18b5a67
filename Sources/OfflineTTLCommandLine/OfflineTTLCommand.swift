import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `offline-ttl` command: finds the subcommand in ``SubcommandRegistry``, reads its
/// arguments, runs it and turns errors into the exit codes of ``ExitCode``.
public enum OfflineTTLCommand {
  /// Runs the command with `arguments` (program name first) on the real standard streams and
  /// the system clock, then exits with its status.
  ///
  /// - Parameter arguments: `CommandLine.arguments`.
  public static func main(_ arguments: [String]) -> Never {
    // Standard input, output or error closed by the caller: `/dev/null`, read-only, goes on
    // each closed one, so that nothing opened later takes its number (a store file or a D-Bus
    // socket as standard output would receive what the command prints). Writes to it still
    // fail (`EBADF`), as they did while it was closed, and are reported as such.
    for standard: Int32 in 0...2 where fcntl(standard, F_GETFD) == -1 && errno == EBADF {
      _ = open("/dev/null", O_RDONLY)
    }
    // A closed pipe must give a write error, not kill the process.
    signal(SIGPIPE, SIG_IGN)
    // What the tool creates is private whatever the caller's umask: one that removed the
    // owner's bits (umask 777) made a store directory of mode 0000 that no later sign-in could
    // open. The store's own modes (0700 directories, 0600 files) are within 077.
    umask(0o077)
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let pair = String(cString: pointer)
      if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
      }
      entry += 1
    }
    let context = CommandContext.process(environment: environment)
    var code: ExitCode
    if let index = ProcessArguments.firstInvalidUTF8Index() {
      // Decoded, the bad bytes would become U+FFFD: another key or path than the one meant.
      code = toolUsageError(
        "argument \(index) is not valid UTF-8 (keys and paths must be UTF-8)", context: context)
    } else {
      code = run(Array(arguments.dropFirst()), context: context)
    }
    context.standardOutput.flush()
    if context.standardOutput.writeFailed, code != .committedOutputLost {
      // Output that did not arrive must not look like success (e.g. a full disk or closed pipe).
      context.standardError.writeError("cannot write standard output")
      code = .ioError
    }
    context.standardError.flush()
    exit(code.rawValue)
  }

  /// Runs the command with `arguments` (without the program name) in `context`.
  ///
  /// - Returns: The exit status; output is left in the context's sinks (call `flush()`).
  static func run(_ arguments: [String], context: CommandContext) -> ExitCode {
    let configurations = SubcommandRegistry.all.map { $0.configuration }
    guard let first = arguments.first else {
      return toolUsageError("missing subcommand", context: context)
    }
    if first == "--help" || first == "-h" {
      context.standardOutput.write(HelpFormatter.toolHelp(subcommands: configurations))
      return .success
    }
    if first == "--version" {
      guard arguments.count == 1 else {
        return toolUsageError("--version takes no arguments", context: context)
      }
      context.standardOutput.writeLine("\(HelpFormatter.toolName) \(OfflineTTLVersion.current)")
      return .success
    }
    if first == "help" {
      return help(Array(arguments.dropFirst()), context: context)
    }
    guard let subcommand = SubcommandRegistry.subcommand(named: first) else {
      let message =
        first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown subcommand '\(first)'"
      return toolUsageError(message, context: context)
    }
    let configuration = subcommand.configuration
    do {
      switch try ArgumentReader.read(Array(arguments.dropFirst()), for: configuration) {
      case .help:
        context.standardOutput.write(HelpFormatter.help(for: configuration))
        return .success
      case .arguments(let parsed):
        return try subcommand.run(parsed, context: context)
      }
    } catch let error as UsageError {
      context.standardError.writeError(error.message)
      context.standardError.write(HelpFormatter.usageHint(for: configuration))
      return .usage
    } catch let failure as CommandFailure {
      context.standardError.writeError(failure.message)
      return failure.exitCode
    } catch {
      context.standardError.writeError("\(error)")
      return .software
    }
  }

  /// `help`, `help <subcommand>`, `help --man`, `help --completion bash|zsh`.
  private static func help(_ arguments: [String], context: CommandContext) -> ExitCode {
    let configurations = SubcommandRegistry.all.map { $0.configuration }
    switch arguments.first {
    case nil, "--help", "-h":
      guard arguments.count <= 1 else { break }
      context.standardOutput.write(HelpFormatter.toolHelp(subcommands: configurations))
      return .success
    case "--man":
      guard arguments.count == 1 else { break }
      context.standardOutput.write(ManualPage.roff(subcommands: configurations))
      return .success
    case "--completion":
      guard arguments.count == 2 else {
        return toolUsageError("help --completion needs one shell: bash or zsh", context: context)
      }
      switch arguments[1] {
      case "bash": context.standardOutput.write(Completions.bash(subcommands: configurations))
      case "zsh": context.standardOutput.write(Completions.zsh(subcommands: configurations))
      default:
        return toolUsageError(
          "help --completion: unknown shell '\(arguments[1])' (use bash or zsh)",
          context: context)
      }
      return .success
    case let name?:
      guard arguments.count == 1 else { break }
      guard let subcommand = SubcommandRegistry.subcommand(named: name) else {
        return toolUsageError("help: unknown subcommand '\(name)'", context: context)
      }
      context.standardOutput.write(HelpFormatter.help(for: subcommand.configuration))
      return .success
    }
    return toolUsageError(
      "help takes one subcommand name, --man, or --completion bash|zsh", context: context)
  }

  private static func toolUsageError(_ message: String, context: CommandContext) -> ExitCode {
    context.standardError.writeError(message)
    context.standardError.write(HelpFormatter.toolUsageHint())
    return .usage
  }
}
