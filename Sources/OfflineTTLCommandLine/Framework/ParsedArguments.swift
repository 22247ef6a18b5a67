/// A subcommand's arguments after ``ArgumentReader`` checked them: option values as strings,
/// flags, and positionals. Typed access lives in `ParsedArguments+Values.swift`.
///
/// Values are read through the option's declaration (``OptionSpec``, declared once in
/// `OptionSpec+Registry.swift`), never through a string, so a misspelt name cannot compile.
/// Reading an option that the subcommand does not declare is a programming error and stops the
/// process (it would otherwise silently read nothing).
struct ParsedArguments: Equatable {
  /// Every value of each option with a value, in command-line order, under the option's name
  /// (an alias's values are stored under the name).
  var values: [String: [String]]
  /// The flags that were given, by name.
  var flags: Set<String>
  /// The positional arguments, in order.
  var positionals: [String]
  /// The names of the options the subcommand declares, or `nil` to accept any (tests that build
  /// arguments by hand).
  var declared: Set<String>?

  init(
    values: [String: [String]] = [:], flags: Set<String> = [], positionals: [String] = [],
    declared: Set<String>? = nil
  ) {
    self.values = values
    self.flags = flags
    self.positionals = positionals
    self.declared = declared
  }

  /// Equal when the values, flags and positionals are (``declared`` is a check, not a value).
  static func == (lhs: ParsedArguments, rhs: ParsedArguments) -> Bool {
    lhs.values == rhs.values && lhs.flags == rhs.flags && lhs.positionals == rhs.positionals
  }

  /// Whether `option` is declared by the subcommand; stops the process when it is not.
  private func checkDeclared(_ option: OptionSpec) {
    precondition(
      declared?.contains(option.name) ?? true,
      "option '--\(option.name)' is read but not declared by this subcommand")
  }

  /// Whether the flag was given.
  func flag(_ option: OptionSpec) -> Bool {
    checkDeclared(option)
    return flags.contains(option.name)
  }

  /// Every value of the option, in order; empty when it was not given.
  func values(_ option: OptionSpec) -> [String] {
    checkDeclared(option)
    return values[option.name] ?? []
  }

  /// The option's value, or `nil` when it was not given (the reader already rejected a
  /// non-repeatable option given twice).
  func value(_ option: OptionSpec) -> String? {
    checkDeclared(option)
    return values[option.name]?.last
  }

  /// The option's value.
  ///
  /// - Throws: ``UsageError`` `missing option '--name'` when it was not given.
  func requiredValue(_ option: OptionSpec) throws(UsageError) -> String {
    guard let value = value(option) else { throw UsageError("missing option '--\(option.name)'") }
    return value
  }
}
