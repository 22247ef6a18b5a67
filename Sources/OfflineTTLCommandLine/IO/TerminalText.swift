/// Text the tool writes for people (error messages on standard error) made safe for a terminal.
///
/// A message may quote what the tool was given or found: a store path, an item key, a reason
/// from the library that names a file. Raw, a control character (an ANSI escape sequence, a
/// newline that forges a second `error:` line) or a format character (U+202E RIGHT-TO-LEFT
/// OVERRIDE, which reverses what follows on screen) would make the message say something else.
/// Each is written as `\u{XXXX}`, the spelling Swift's `debugDescription` uses.
enum TerminalText {
  /// `text` with every control (Cc), format (Cf), line separator (Zl) and paragraph separator
  /// (Zp) scalar replaced by `\u{XXXX}`; everything else unchanged.
  ///
  /// - Complexity: O(n) in the length of `text`; returns `text` itself when nothing is replaced.
  static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    result.reserveCapacity(text.utf8.count + 16)
    for scalar in text.unicodeScalars {
      if needsEscape(scalar) {
        result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator: true
    default: false
    }
  }
}
