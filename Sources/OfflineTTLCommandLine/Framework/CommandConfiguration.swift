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
  /// What each exit status means, in order, e.g. `(0, "fresh")`; printed in `--help` and in
  /// the manual page's EXIT STATUS section.
  var exitStatus: [(code: Int32, meaning: String)] = []
  /// Example command lines (without the tool name), each with one sentence saying what it does.
  var examples: [(command: String, meaning: String)] = []

  /// The option `--name` (or its alias `--name`), or `nil` when this subcommand has none.
  func option(named name: String) -> OptionSpec? {
    options.first { $0.name == name || $0.aliases.contains(name) }
  }
}

/// A long option: `--name V`, `--name=V`, or a flag `--name` when ``valueName`` is `nil`.
///
/// Every option of the tool is declared once, in `OptionSpec+Registry.swift`; subcommands list
/// those declarations, and read values through them (``ParsedArguments/value(_:)``), so the
/// parser, `--help`, the manual page and the shell completions cannot disagree on a name, and a
/// misspelt name does not compile.
struct OptionSpec: Sendable {
  /// The name without the leading dashes, e.g. `written-at`.
  var name: String
  /// Other accepted spellings without the dashes (e.g. `dir` for `store` in `mark`), documented
  /// as aliases; their values are read under ``name``.
  var aliases: [String] = []
  /// What the value is, for the shell completions (a directory, a duration, one of some words).
  var kind: ValueKind = .text
  /// The placeholder shown in help (`<t>`), or `nil` for a flag that takes no value.
  var valueName: String?
  /// Whether the option may be given more than once (values are kept in order).
  var isRepeatable: Bool
  /// One sentence.
  var help: String
  /// Checks one value's syntax (and whatever can be judged from the value alone), throwing the
  /// same ``UsageError`` the subcommand would; ``ArgumentReader`` runs it on every value it
  /// reads, so a bad value is a usage error (exit 64) before any subcommand code runs, and so
  /// before any store is looked at (exit 74). `nil` for a value that is any text (`--store`: its
  /// problems are the store's).
  var check: (@Sendable (String) throws(UsageError) -> Void)? = nil

  /// What an option's value is, for shell completion.
  enum ValueKind: Sendable, Equatable {
    /// No value (a flag).
    case none
    /// Free text (a time, a duration, a key).
    case text
    /// A directory path.
    case directory
    /// A file path, or `key=path` whose path part is a file.
    case file
    /// One of these words.
    case choice([String])
  }

  /// A flag (no value), given at most once.
  static func flag(_ name: String, help: String) -> OptionSpec {
    OptionSpec(name: name, kind: .none, valueName: nil, isRepeatable: false, help: help)
  }

  /// An option with a value.
  static func option(
    _ name: String, value: String, kind: ValueKind = .text, repeatable: Bool = false,
    help: String
  ) -> OptionSpec {
    OptionSpec(name: name, kind: kind, valueName: value, isRepeatable: repeatable, help: help)
  }

  /// The same option with another help sentence (the name, value and kind stay as declared).
  func with(help: String) -> OptionSpec {
    var copy = self
    copy.help = help
    return copy
  }

  /// The same option with `check` run on each of its values (see ``check``).
  func checked(by check: @escaping @Sendable (String) throws(UsageError) -> Void) -> OptionSpec {
    var copy = self
    copy.check = check
    return copy
  }

  /// The same option, which may be given more than once (values are kept in order).
  func repeatable() -> OptionSpec {
    var copy = self
    copy.isRepeatable = true
    return copy
  }

  /// The same option, also accepted as `--alias` (documented as an alias in help and manual).
  func aliased(_ alias: String) -> OptionSpec {
    var copy = self
    copy.aliases.append(alias)
    return copy
  }

  /// The help sentence with the aliases, as `--help` and the manual page print it.
  var fullHelp: String {
    var text = help
    if isRepeatable { text += " Repeatable." }
    for alias in aliases { text += " Also accepted as --\(alias)." }
    return text
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
