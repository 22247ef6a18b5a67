/// What a subcommand accepts and how its help reads.
struct CommandConfiguration {
  /// The subcommand's name, e.g. `evaluate`.
  var name: String
  /// One sentence for the tool's subcommand list and the top of `--help`.
  var abstract: String
  /// Usage lines without the tool name, e.g. `evaluate --now <t> [--json]`. The first is
  /// printed after `USAGE: offline-ttl `, the rest aligned under it.
  var usage: [String]
  /// The options, in the order `--help` lists them (`--help` itself is added by the framework).
  var options: [OptionSpec]
  /// The positional arguments, in order. A repeatable one must be last.
  var positionals: [PositionalSpec] = []
  /// Paragraphs printed after the options in `--help`, or `nil`.
  var discussion: String? = nil
}

/// A long option: `--name V`, `--name=V`, or a flag `--name` when ``valueName`` is `nil`.
struct OptionSpec {
  /// The name without the leading dashes, e.g. `written-at`.
  var name: String
  /// The placeholder shown in help (`<t>`), or `nil` for a flag that takes no value.
  var valueName: String?
  /// Whether the option may be given more than once (values are kept in order).
  var isRepeatable: Bool
  /// One sentence.
  var help: String

  /// A flag (no value), given at most once.
  static func flag(_ name: String, help: String) -> OptionSpec {
    OptionSpec(name: name, valueName: nil, isRepeatable: false, help: help)
  }

  /// An option with a value.
  static func option(
    _ name: String, value: String, repeatable: Bool = false, help: String
  ) -> OptionSpec {
    OptionSpec(name: name, valueName: value, isRepeatable: repeatable, help: help)
  }
}

/// A positional argument.
struct PositionalSpec {
  /// The placeholder shown in help, e.g. `key`.
  var name: String
  /// Whether it may be left out. Required positionals must come before optional ones.
  var isOptional: Bool = false
  /// Whether it takes all remaining positionals (only the last one may).
  var isRepeatable: Bool = false
  /// One sentence.
  var help: String
}
