import Foundation

/// The name of one cached item: 1–255 bytes of UTF-8 in Unicode normalization form C (NFC), with
/// no `/`, NUL or control characters, never `.` or `..`.
///
/// The rules make every key a valid file name on every common file system, so
/// ``DirectoryCacheStore`` stores an item under its key unchanged, in a directory of its own where
/// no key can clash with the store's own files (`clock-mark`, locks, the index).
public struct CacheItemKey: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The key's text, already validated.
  public let rawValue: String

  /// Validates and wraps a key.
  ///
  /// - Parameter rawValue: The key's text.
  /// - Throws: ``InvalidValueError`` with code ``InvalidValueError/Code/invalidKey`` and a reason
  ///   naming the rule that was broken: empty, longer than 255 UTF-8 bytes, `.` or `..`,
  ///   containing `/`, NUL or a control character (U+0000–U+001F, U+007F–U+009F), or not in
  ///   NFC (canonically equivalent spellings would be one key to Swift but two file names).
  /// - Complexity: O(n) in the key's length.
  ///
  /// With a string literal argument, `CacheItemKey("token")` is the literal form
  /// (``init(stringLiteral:)``), which does not throw: an invalid literal stops the program.
  public init(_ rawValue: String) throws(InvalidValueError) {
    if let problem = Self.problem(with: rawValue) {
      throw InvalidValueError(
        code: .invalidKey, reason: "invalid key \(Self.quoted(rawValue)): \(problem)")
    }
    self.rawValue = rawValue
  }

  /// Wraps bytes already known to be valid (read back from a store's own directory).
  init(validated rawValue: String) {
    self.rawValue = rawValue
  }

  /// Why `text` is not a valid key, or `nil` when it is.
  static func problem(with text: String) -> String? {
    let bytes = text.utf8.count
    if bytes == 0 { return "a key must be 1 to 255 bytes of UTF-8, got 0 bytes" }
    if bytes > 255 { return "a key must be 1 to 255 bytes of UTF-8, got \(bytes) bytes" }
    if text == "." || text == ".." { return "`.` and `..` are not allowed" }
    for scalar in text.unicodeScalars {
      if scalar == "/" { return "`/` is not allowed" }
      if scalar.value == 0 { return "NUL is not allowed" }
      if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
        return "control characters are not allowed"
      }
    }
    // Swift compares strings by canonical equivalence but a file is named by its bytes: "é"
    // written as U+00E9 and as e + U+0301 are one key to the index and two files on disk, and
    // the older of the two escaped the age check. Only the NFC spelling is a key.
    if !text.utf8.allSatisfy({ $0 < 0x80 })
      && !text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8)
    {
      return "a key must be in Unicode normalization form C (NFC), e.g. é as U+00E9"
    }
    return nil
  }

  /// The key in quotes with control characters escaped, safe to print.
  static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars.prefix(80) {
      if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\"" {
        out += scalar == "\"" ? "\\\"" : "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out + (text.unicodeScalars.count > 80 ? "…\"" : "\"")
  }

  /// Orders keys by their UTF-8 bytes.
  public static func < (lhs: CacheItemKey, rhs: CacheItemKey) -> Bool {
    lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
  }

  /// The key's text.
  public var description: String { rawValue }
}
