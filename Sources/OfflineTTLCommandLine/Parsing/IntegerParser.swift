/// Exact decimal `Int64` parsing for command-line values and JSON numbers: an optional `-`, then
/// one or more ASCII digits, nothing else (no `+`, spaces, `_`, exponent or fraction).
enum IntegerParser {
  /// Why text is not an `Int64`.
  enum Failure: Error, Equatable {
    /// Not an optional `-` followed by digits.
    case notAnInteger
    /// Digits, but beyond `Int64.min...Int64.max`.
    case outOfRange
  }

  /// Parses `bytes` as a decimal `Int64`.
  ///
  /// - Complexity: O(n); no allocation.
  static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Int64, Failure> {
    var index = 0
    let negative = bytes.count > 0 && bytes[0] == UInt8(ascii: "-")
    if negative { index = 1 }
    guard index < bytes.count else { return .failure(.notAnInteger) }
    // Accumulate as a negative number: its range includes Int64.min.
    var value: Int64 = 0
    var overflowed = false
    while index < bytes.count {
      let digit = bytes[index] &- UInt8(ascii: "0")
      guard digit < 10 else { return .failure(.notAnInteger) }
      let (times10, o1) = value.multipliedReportingOverflow(by: 10)
      let (next, o2) = times10.subtractingReportingOverflow(Int64(digit))
      if o1 || o2 { overflowed = true }
      value = next
      index += 1
    }
    if overflowed { return .failure(.outOfRange) }
    if negative { return .success(value) }
    guard value != .min else { return .failure(.outOfRange) }
    return .success(-value)
  }

  /// Parses `text` as a decimal `Int64`.
  static func parse(_ text: String) -> Result<Int64, Failure> {
    var text = text
    return text.withUTF8 { parse($0) }
  }

  /// Parses the value of a command-line option as a decimal `Int64`.
  ///
  /// - Parameters:
  ///   - text: The value.
  ///   - option: The option's name without dashes, for the message.
  /// - Throws: ``UsageError`` naming the option and the value.
  static func int64(_ text: String, option: String) throws(UsageError) -> Int64 {
    switch parse(text) {
    case .success(let value): return value
    case .failure(.notAnInteger):
      throw UsageError("--\(option): '\(text)' is not an integer")
    case .failure(.outOfRange):
      throw UsageError(
        "--\(option): '\(text)' is out of range for a 64-bit integer"
          + " (\(Int64.min) to \(Int64.max))")
    }
  }
}
