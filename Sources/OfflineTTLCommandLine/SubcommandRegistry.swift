// How to add a subcommand:
//   1. Create `Subcommands/<Name>.swift` with `enum <Name>: Subcommand { ... }`: a
//      `configuration` (name, one-sentence abstract, usage lines, options) and
//      `run(_:context:)`, which returns an `ExitCode` and throws `UsageError` (exit 64 with
//      usage) or `CommandFailure` (its own exit code). See `Subcommands/Evaluate.swift`.
//   2. Add `<Name>.self` to `all` below, in the order `offline-ttl --help` should list it.
// Help, `-h`/`--help`, unknown options and usage-error output come from the framework.

/// Every `offline-ttl` subcommand, in the order `offline-ttl --help` lists them.
enum SubcommandRegistry {
  static var all: [any Subcommand.Type] {
    [
      Status.self,
      Read.self,
      SignIn.self,
      Demo.self,
      Evaluate.self,
      Mark.self,
    ]
  }

  /// The subcommand called `name`, or `nil`.
  static func subcommand(named name: String) -> (any Subcommand.Type)? {
    all.first { $0.configuration.name == name }
  }
}
