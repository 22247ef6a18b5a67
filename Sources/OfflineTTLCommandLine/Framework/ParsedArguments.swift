/// A subcommand's arguments after ``ArgumentReader`` checked them: option values as strings,
/// flags, and positionals. Typed access lives in `ParsedArguments+Values.swift`.
struct ParsedArguments: Equatable {
  /// Every value of each option with a value, in command-line order.
  var values: [String: [String]]
  /// The flags that were given.
  var flags: Set<String>
  /// The positional arguments, in order.
  var positionals: [String]

  init(values: [String: [String]] = [:], flags: Set<String> = [], positionals: [String] = []) {
    self.values = values
    self.flags = flags
    self.positionals = positionals
  }

  /// Whether the flag `--name` was given.
  func flag(_ name: String) -> Bool { flags.contains(name) }

  /// Every value of `--name`, in order; empty when it was not given.
  func values(_ name: String) -> [String] { values[name] ?? [] }

  /// The value of `--name`, or `nil` when it was not given (the reader already rejected a
  /// non-repeatable option given twice).
  func value(_ name: String) -> String? { values[name]?.last }

  /// The value of `--name`.
  ///
  /// - Throws: ``UsageError`` `missing option '--name'` when it was not given.
  func requiredValue(_ name: String) throws(UsageError) -> String {
    guard let value = value(name) else { throw UsageError("missing option '--\(name)'") }
    return value
  }
}
