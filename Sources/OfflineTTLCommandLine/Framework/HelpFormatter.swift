import OfflineTTL

/// Builds the help and usage text for the tool and its subcommands.
enum HelpFormatter {
  /// The tool's name as users type it.
  static let toolName = "offline-ttl"

  /// The full `--help` text of a subcommand (ends with a newline).
  static func help(for configuration: CommandConfiguration) -> String {
    var lines = ["OVERVIEW: \(configuration.abstract)", ""]
    lines += usageLines(for: configuration, label: "USAGE:")
    var rows: [(String, String)] = []
    for spec in configuration.positionals {
      rows.append(("<\(spec.name)>" + (spec.isRepeatable ? " ..." : ""), spec.help))
    }
    if !rows.isEmpty {
      lines += ["", "ARGUMENTS:"] + table(rows)
    }
    rows = configuration.options.map { spec in (optionLabel(spec), spec.fullHelp) }
    rows.append(("-h, --help", "Shows this help."))
    lines += ["", "OPTIONS:"] + table(rows)
    if let discussion = configuration.discussion {
      lines += ["", discussion]
    }
    if !configuration.exitStatus.isEmpty {
      lines += ["", "EXIT STATUS:"]
      lines += table(configuration.exitStatus.map { ("\($0.code)", $0.meaning) })
    }
    if !configuration.examples.isEmpty {
      lines += ["", "EXAMPLES:"]
      for example in configuration.examples {
        lines += ["  \(toolName) \(example.command)"]
        lines += wrap(example.meaning, width: lineWidth - 6).map { "      " + $0 }
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `--name <value>` as help and the manual page show an option.
  static func optionLabel(_ spec: OptionSpec) -> String {
    var left = "--\(spec.name)"
    if let valueName = spec.valueName { left += " <\(valueName)>" }
    return left
  }

  /// What a usage error prints after its `error: ...` line (ends with a newline).
  static func usageHint(for configuration: CommandConfiguration) -> String {
    (usageLines(for: configuration, label: "usage:")
      + ["See '\(toolName) \(configuration.name) --help'."])
      .joined(separator: "\n") + "\n"
  }

  /// The tool's own `--help` text, listing the subcommands (ends with a newline).
  static func toolHelp(subcommands: [CommandConfiguration]) -> String {
    var lines = [
      "OVERVIEW: Decides whether an offline cache may still be used, and stays right when the"
        + " wall clock is moved backward.",
      "",
      "USAGE: \(toolName) <subcommand> [options]",
      "",
      "SUBCOMMANDS:",
    ]
    lines += table(subcommands.map { ($0.name, $0.abstract) })
    lines += ["", "OPTIONS:"]
    lines += table([
      ("-h, --help", "Shows this help."),
      ("--version", "Prints the version, e.g. '\(toolName) \(OfflineTTLVersion.current)'."),
    ])
    lines += ["", "OTHER COMMANDS:"]
    lines += table([
      ("help <subcommand>", "Shows a subcommand's help (the same as '<subcommand> --help')."),
      ("help --man", "Prints the manual page offline-ttl(1) (roff, for man -l)."),
      ("help --completion bash|zsh", "Prints the shell completion script."),
    ])
    lines += ["", "See '\(toolName) <subcommand> --help' for a subcommand's options."]
    return lines.joined(separator: "\n") + "\n"
  }

  /// What a usage error of the tool itself (no or unknown subcommand) prints after `error: ...`.
  static func toolUsageHint() -> String {
    "usage: \(toolName) <subcommand> [options]\nSee '\(toolName) --help'.\n"
  }

  private static func usageLines(for configuration: CommandConfiguration, label: String)
    -> [String]
  {
    let indent = String(repeating: " ", count: label.count)
    return configuration.usage.enumerated().map { index, usage in
      "\(index == 0 ? label : indent) \(toolName) \(usage)"
    }
  }

  /// Help lines are wrapped to this many columns.
  static let lineWidth = 100

  private static func table(_ rows: [(String, String)]) -> [String] {
    let width = min(max(rows.map(\.0.count).max() ?? 0, 8), 28)
    let indent = String(repeating: " ", count: width + 4)
    return rows.map { left, right in
      let wrapped = wrap(right, width: lineWidth - indent.count)
        .joined(separator: "\n" + indent)
      if left.count > width { return "  \(left)\n" + indent + wrapped }
      return "  " + left + String(repeating: " ", count: width - left.count + 2) + wrapped
    }
  }

  /// Splits `text` into lines of at most `width` characters at spaces (a longer word stays
  /// whole on its own line).
  static func wrap(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var current = ""
    for word in text.split(separator: " ") {
      if current.isEmpty {
        current = String(word)
      } else if current.count + 1 + word.count <= width {
        current += " " + word
      } else {
        lines.append(current)
        current = String(word)
      }
    }
    if !current.isEmpty || lines.isEmpty { lines.append(current) }
    return lines
  }
}
