/// Reads a subcommand's arguments against its ``CommandConfiguration``.
///
/// Accepted forms: `--name value`, `--name=value` (an option's aliases too, read under its
/// name), flags `--name`, positionals, and `--` after
/// which every argument is positional. A lone `-` is a positional (conventionally standard
/// input). `--help` and `-h` anywhere before `--` ask for help. Anything else starting with `-`
/// is an unknown option. Every value is checked by its option's ``OptionSpec/check``. Every
/// problem is a ``UsageError``.
enum ArgumentReader {
  /// What reading produced: help was asked for, or the parsed arguments.
  enum Outcome: Equatable {
    case help
    case arguments(ParsedArguments)
  }

  /// Reads `arguments` (everything after the subcommand name).
  ///
  /// - Throws: ``UsageError`` for an unknown option, a missing or unexpected value, a value its
  ///   option's check refuses, a non-repeatable option given twice, or a wrong number of
  ///   positionals.
  static func read(_ arguments: [String], for configuration: CommandConfiguration)
    throws(UsageError) -> Outcome
  {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var index = 0
    var onlyPositionals = false
    // --help wins over every other problem, so look for it first.
    for argument in arguments {
      if argument == "--" { break }
      if argument == "--help" || argument == "-h" { return .help }
    }
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      guard argument.hasPrefix("--") else {
        throw UsageError("unknown option '\(argument)'")
      }
      let body = argument.dropFirst(2)
      let name: String
      var inlineValue: String?
      if let equals = body.firstIndex(of: "=") {
        name = String(body[..<equals])
        inlineValue = String(body[body.index(after: equals)...])
      } else {
        name = String(body)
      }
      guard let spec = configuration.option(named: name) else {
        throw UsageError("unknown option '--\(name)'")
      }
      if spec.valueName == nil {
        if inlineValue != nil { throw UsageError("option '--\(name)' takes no value") }
        if flags.contains(spec.name) { throw UsageError("option '--\(name)' was given twice") }
        flags.insert(spec.name)
        continue
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else {
        guard index < arguments.count else {
          throw UsageError("option '--\(name)' needs a value")
        }
        value = arguments[index]
        index += 1
      }
      if !spec.isRepeatable, values[spec.name] != nil {
        throw UsageError("option '--\(name)' was given more than once")
      }
      // Every value is judged here, before the subcommand runs (and so before its store is
      // looked at): a bad value is a usage error whatever order the subcommand reads options in.
      // An empty path names no directory: the C library would take it as the working
      // directory for some calls and as missing (ENOENT) for others.
      if spec.kind == .directory && value.isEmpty {
        throw UsageError(
          "--\(spec.name): an empty path names no directory (give . for the working directory)")
      }
      try spec.check?(value)
      values[spec.name, default: []].append(value)
    }
    try checkPositionals(positionals, against: configuration.positionals)
    return .arguments(
      ParsedArguments(
        values: values, flags: flags, positionals: positionals,
        declared: Set(configuration.options.map(\.name))))
  }

  private static func checkPositionals(_ given: [String], against specs: [PositionalSpec])
    throws(UsageError)
  {
    let required = specs.filter { !$0.isOptional }
    if given.count < required.count {
      throw UsageError("missing argument <\(required[given.count].name)>")
    }
    if specs.last?.isRepeatable != true, given.count > specs.count {
      throw UsageError("unexpected argument '\(given[specs.count])'")
    }
  }
}
