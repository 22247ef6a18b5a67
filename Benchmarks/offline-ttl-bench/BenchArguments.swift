import Foundation

/// A benchmark could not run: a usage error (exit 64) or a failure (exit 1). Never a fake figure.
struct BenchError: Error, CustomStringConvertible {
  /// Whether the command line was wrong (exit 64) rather than the run failing (exit 1).
  let isUsage: Bool
  /// One sentence for people.
  let message: String

  /// A usage error: bad or unknown option.
  static func usage(_ message: String) -> BenchError { BenchError(isUsage: true, message: message) }
  /// A failure while measuring.
  static func failed(_ message: String) -> BenchError {
    BenchError(isUsage: false, message: message)
  }

  var description: String { message }
}

/// The options a subcommand accepts after its name: `--flag` and `--name value`. Unknown options
/// are usage errors. Shared by every benchmark.
struct BenchArguments {
  private var values: [String: String] = [:]
  private var flags: Set<String> = []

  /// Parses `arguments` against the allowed flag and value-option names (without `--`).
  ///
  /// - Throws: ``BenchError`` (usage) for an unknown option, a missing value or a stray word.
  init(_ arguments: [String], flags allowedFlags: Set<String>, options allowedOptions: Set<String>)
    throws(BenchError)
  {
    var index = 0
    while index < arguments.count {
      let word = arguments[index]
      guard word.hasPrefix("--") else { throw .usage("unexpected argument '\(word)'") }
      let name = String(word.dropFirst(2))
      if allowedFlags.contains(name) {
        flags.insert(name)
      } else if allowedOptions.contains(name) {
        guard index + 1 < arguments.count else { throw .usage("\(word) needs a value") }
        index += 1
        values[name] = arguments[index]
      } else {
        throw .usage("unknown option '\(word)'")
      }
      index += 1
    }
  }

  /// Parses a subcommand's options (`--help` and `--quick` always among the flags); for
  /// `--help`, prints `help` and returns `nil`, and the subcommand returns at once.
  ///
  /// - Throws: ``BenchError`` (usage) as ``init(_:flags:options:)``.
  static func parse(
    _ arguments: [String], help: String, flags: Set<String> = [], options: Set<String> = []
  ) throws(BenchError) -> BenchArguments? {
    let parsed = try BenchArguments(
      arguments, flags: flags.union(["quick", "help"]), options: options)
    guard !parsed.flag("help") else {
      print(help)
      return nil
    }
    return parsed
  }

  /// Whether `--name` was given.
  func flag(_ name: String) -> Bool { flags.contains(name) }

  /// The value of `--name`, if given.
  func value(_ name: String) -> String? { values[name] }

  /// The value of `--name` as a positive integer (underscores allowed), or `defaultValue`.
  func positiveInt(_ name: String, default defaultValue: Int) throws(BenchError) -> Int {
    guard let text = values[name] else { return defaultValue }
    guard let number = Int(text.replacingOccurrences(of: "_", with: "")), number > 0 else {
      throw .usage("--\(name) needs a positive integer, got '\(text)'")
    }
    return number
  }
}
