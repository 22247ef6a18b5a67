import Foundation

/// The `offline-ttl` command: dispatches to one subcommand per file.
public enum OfflineTTLCommand {
  /// Runs the command with `arguments` (program name first) and exits with its status.
  public static func main(_ arguments: [String]) -> Never {
    FileHandle.standardError.write(Data("error: not built yet\n".utf8))
    exit(64)
  }
}
