import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads one `evaluate --batch` line, `{"written_at":[...],"now":N,"mark":N|null,"max_age":N}`,
/// straight from its bytes, applying the unit as it goes.
///
/// Foundation's `JSONDecoder` reached about 108,000 cases/s on this machine (release build, one
/// million lines), short of the 200,000/s target, so this narrow reader exists. It accepts any
/// RFC 8259 object with these four members in any order (other members are skipped; a member
/// given twice is an error) and only exact integers (`-?(0|[1-9][0-9]*)`; a fraction or
/// exponent is "not an integer"). It keeps no item list: the oldest and newest item and the
/// count are all the policy needs.
///
/// - Complexity: O(line length); no heap allocation on the success path.
struct BatchLineParser {
  /// A line that is not a valid case; `message` is the text of its `{"error":...}` line.
  struct Failure: Error {
    var message: String
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private let unit: TimeUnit
  private var index = 0

  private init(_ bytes: UnsafeBufferPointer<UInt8>, unit: TimeUnit) {
    self.bytes = bytes
    self.unit = unit
  }

  /// One decoded case, in instants and a duration.
  struct Case {
    var items: ItemTimeSummary
    var now: WallClockInstant
    var mark: WallClockInstant?
    var maxAge: Duration
  }

  /// Parses one line.
  ///
  /// - Throws: ``Failure`` naming the field and the problem.
  static func parse(_ bytes: UnsafeBufferPointer<UInt8>, unit: TimeUnit) throws(Failure) -> Case {
    var parser = BatchLineParser(bytes, unit: unit)
    return try parser.parseCase()
  }

  private mutating func parseCase() throws(Failure) -> Case {
    var items: ItemTimeSummary?
    var now: WallClockInstant?
    var mark: WallClockInstant??
    var maxAge: Duration?
    skipSpace()
    try expect(UInt8(ascii: "{"))
    skipSpace()
    if peek() == UInt8(ascii: "}") {
      index += 1
    } else {
      while true {
        skipSpace()
        let key = try parseKey()
        skipSpace()
        try expect(UInt8(ascii: ":"))
        skipSpace()
        switch key {
        case .writtenAt:
          guard items == nil else { throw Failure(message: "field \"written_at\" given twice") }
          items = try parseItems()
        case .now:
          guard now == nil else { throw Failure(message: "field \"now\" given twice") }
          now = try instant(parseInteger(field: "now"), field: "now")
        case .mark:
          guard mark == nil else { throw Failure(message: "field \"mark\" given twice") }
          if try parseNull() {
            mark = .some(nil)
          } else {
            mark = .some(try instant(parseInteger(field: "mark"), field: "mark"))
          }
        case .maxAge:
          guard maxAge == nil else { throw Failure(message: "field \"max_age\" given twice") }
          let count = try parseInteger(field: "max_age")
          guard count >= 0 else {
            throw Failure(message: "max_age: \(count) is negative; a max age must be zero or more")
          }
          switch unit.maxAge(count, name: "max_age") {
          case .success(let duration): maxAge = duration
          case .failure(let error): throw Failure(message: error.message)
          }
        case .other:
          try skipValue(depth: 0)
        }
        skipSpace()
        if peek() == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect(UInt8(ascii: "}"))
        break
      }
    }
    skipSpace()
    guard index == bytes.count else { throw invalidJSON() }
    guard let items else { throw Failure(message: "missing field \"written_at\"") }
    guard let now else { throw Failure(message: "missing field \"now\"") }
    guard let mark else { throw Failure(message: "missing field \"mark\"") }
    guard let maxAge else { throw Failure(message: "missing field \"max_age\"") }
    return Case(items: items, now: now, mark: mark, maxAge: maxAge)
  }

  private enum Key { case writtenAt, now, mark, maxAge, other }

  private mutating func parseKey() throws(Failure) -> Key {
    let (key, escaped) = try scanString()
    // A name written with escapes (`"n\u006fw"`) is the same name (RFC 8259): decode it first.
    if escaped {
      return Self.unescaped(key).withUnsafeBufferPointer { Self.key(named: $0) }
    }
    return Self.key(named: key)
  }

  private static func key(named name: UnsafeBufferPointer<UInt8>) -> Key {
    if equal(name, "written_at") { return .writtenAt }
    if equal(name, "now") { return .now }
    if equal(name, "mark") { return .mark }
    if equal(name, "max_age") { return .maxAge }
    return .other
  }

  /// The UTF-8 bytes of a string's contents that ``scanString()`` already checked, with its
  /// escapes decoded (`\uXXXX` surrogate pairs included).
  ///
  /// - Complexity: O(n) in the length of `raw`; only used for names that contain an escape.
  static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    var result: [UInt8] = []
    var index = 0
    func hex(at start: Int) -> UInt32 {
      var value: UInt32 = 0
      for offset in 0..<4 where start + offset < raw.count {
        let byte = raw[start + offset]
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        default: digit = byte &- UInt8(ascii: "A") &+ 10
        }
        value = value << 4 | UInt32(digit & 0xF)
      }
      return value
    }
    while index < raw.count {
      let byte = raw[index]
      guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
        result.append(byte)
        index += 1
        continue
      }
      let escape = raw[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "b"): result.append(0x08)
      case UInt8(ascii: "f"): result.append(0x0C)
      case UInt8(ascii: "n"): result.append(0x0A)
      case UInt8(ascii: "r"): result.append(0x0D)
      case UInt8(ascii: "t"): result.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = hex(at: index)
        index += 4
        if (0xD800...0xDBFF).contains(scalar), index + 6 <= raw.count {
          let low = hex(at: index + 2)
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          index += 6
        }
        result.append(
          contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
      default: result.append(escape)  // \" \\ \/
      }
    }
    return result
  }

  private mutating func parseItems() throws(Failure) -> ItemTimeSummary {
    guard peek() == UInt8(ascii: "[") else {
      if try parseNull() { throw Failure(message: "written_at: must not be null") }
      throw Failure(message: "written_at: not an array of integers")
    }
    index += 1
    skipSpace()
    var count = 0
    var low = Int64.max
    var high = Int64.min
    if peek() == UInt8(ascii: "]") {
      index += 1
      return .empty
    }
    while true {
      skipSpace()
      let value = try instant(
        parseInteger(field: "written_at[\(count)]"), field: "written_at[\(count)]"
      ).nanosecondsSinceEpoch
      low = Swift.min(low, value)
      high = Swift.max(high, value)
      count += 1
      skipSpace()
      if peek() == UInt8(ascii: ",") {
        index += 1
        continue
      }
      try expect(UInt8(ascii: "]"))
      break
    }
    return try! ItemTimeSummary(
      count: count, oldest: WallClockInstant(nanosecondsSinceEpoch: low),
      newest: WallClockInstant(nanosecondsSinceEpoch: high))
  }

  private mutating func parseInteger(field: @autoclosure () -> String) throws(Failure) -> Int64 {
    let start = index
    if peek() == UInt8(ascii: "-") { index += 1 }
    let digitsStart = index
    while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    let digits = index - digitsStart
    if let byte = peek(),
      byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    {
      guard digits > 0 else { throw invalidJSON() }
      throw Failure(message: "\(field()): not an integer")
    }
    guard digits > 0 else {
      if digitsStart == start, try parseNull() {
        throw Failure(message: "\(field()): must not be null")
      }
      if digitsStart == start, peek() != nil, isValueStart(peek()!) {
        throw Failure(message: "\(field()): not an integer")
      }
      throw invalidJSON()
    }
    // JSON forbids leading zeros.
    if digits > 1, bytes[digitsStart] == UInt8(ascii: "0") {
      index = start
      throw invalidJSON()
    }
    switch IntegerParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<index])) {
    case .success(let value): return value
    case .failure:
      throw Failure(message: "\(field()): does not fit in a 64-bit integer")
    }
  }

  private func instant(_ value: Int64, field: @autoclosure () -> String) throws(Failure)
    -> WallClockInstant
  {
    if unit == .nanoseconds { return WallClockInstant(nanosecondsSinceEpoch: value) }
    do {
      return try WallClockInstant(value, unit)
    } catch {
      throw Failure(message: "\(field()): \(error.reason)")
    }
  }

  private mutating func parseNull() throws(Failure) -> Bool {
    guard index + 4 <= bytes.count,
      bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
      bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
    else { return false }
    index += 4
    return true
  }

  private func isValueStart(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "t"),
      UInt8(ascii: "f"):
      true
    default: false
    }
  }

  /// Skips any JSON value (a member this reader does not use).
  private mutating func skipValue(depth: Int) throws(Failure) {
    guard depth < 64, let byte = peek() else { throw invalidJSON() }
    switch byte {
    case UInt8(ascii: "\""):
      _ = try scanString()
    case UInt8(ascii: "["), UInt8(ascii: "{"):
      let isObject = byte == UInt8(ascii: "{")
      let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
      index += 1
      skipSpace()
      if peek() == close {
        index += 1
        return
      }
      while true {
        skipSpace()
        if isObject {
          _ = try parseKey()
          skipSpace()
          try expect(UInt8(ascii: ":"))
          skipSpace()
        }
        try skipValue(depth: depth + 1)
        skipSpace()
        if peek() == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect(close)
        return
      }
    case UInt8(ascii: "t"): try skipLiteral("true")
    case UInt8(ascii: "f"): try skipLiteral("false")
    case UInt8(ascii: "n"): try skipLiteral("null")
    default:
      // A number, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (its value is never used).
      if peek() == UInt8(ascii: "-") { index += 1 }
      if peek() == UInt8(ascii: "0") {
        index += 1
      } else {
        guard skipDigits() > 0 else { throw invalidJSON() }
      }
      if peek() == UInt8(ascii: ".") {
        index += 1
        guard skipDigits() > 0 else { throw invalidJSON() }
      }
      if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
        index += 1
        if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
        guard skipDigits() > 0 else { throw invalidJSON() }
      }
    }
  }

  /// Moves past ASCII digits and returns how many there were.
  private mutating func skipDigits() -> Int {
    let start = index
    while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    return index - start
  }

  /// Moves past the string whose opening quote is at `index`, checked as RFC 8259 says: the
  /// escapes `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX` (a surrogate only
  /// in a pair), no control character, and valid UTF-8.
  ///
  /// - Returns: The bytes between the quotes, as written, and whether an escape was used.
  private mutating func scanString() throws(Failure) -> (UnsafeBufferPointer<UInt8>, Bool) {
    try expect(UInt8(ascii: "\""))
    let start = index
    var escaped = false
    while let byte = peek(), byte != UInt8(ascii: "\"") {
      switch byte {
      case 0..<0x20: throw invalidJSON()
      case UInt8(ascii: "\\"):
        escaped = true
        index += 1
        guard let escape = peek() else { throw invalidJSON() }
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
          UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          break
        case UInt8(ascii: "u"):
          let unit = try hexUnit()
          if (0xDC00...0xDFFF).contains(unit) { throw invalidJSON() }
          if (0xD800...0xDBFF).contains(unit) {
            guard peek() == UInt8(ascii: "\\") else { throw invalidJSON() }
            index += 1
            guard peek() == UInt8(ascii: "u") else { throw invalidJSON() }
            index += 1
            guard (0xDC00...0xDFFF).contains(try hexUnit()) else { throw invalidJSON() }
          }
        default: throw invalidJSON()
        }
      case 0x20..<0x80: index += 1
      default: try skipUTF8Scalar()
      }
    }
    guard index < bytes.count else { throw invalidJSON() }
    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
    index += 1
    return (text, escaped)
  }

  /// The four hex digits of a `\u` escape.
  private mutating func hexUnit() throws(Failure) -> UInt16 {
    var unit: UInt16 = 0
    for _ in 0..<4 {
      guard let byte = peek() else { throw invalidJSON() }
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw invalidJSON()
      }
      unit = unit << 4 | UInt16(digit)
      index += 1
    }
    return unit
  }

  /// Moves past one multi-byte UTF-8 scalar (RFC 3629: no overlong form, no surrogate, nothing
  /// above U+10FFFF).
  private mutating func skipUTF8Scalar() throws(Failure) {
    let lead = bytes[index]
    let continuation: Int
    var second: ClosedRange<UInt8> = 0x80...0xBF
    switch lead {
    case 0xC2...0xDF: continuation = 1
    case 0xE0:
      continuation = 2
      second = 0xA0...0xBF
    case 0xED:
      continuation = 2
      second = 0x80...0x9F
    case 0xE1...0xEF: continuation = 2
    case 0xF0:
      continuation = 3
      second = 0x90...0xBF
    case 0xF4:
      continuation = 3
      second = 0x80...0x8F
    case 0xF1...0xF3: continuation = 3
    default: throw invalidJSON()
    }
    index += 1
    for position in 0..<continuation {
      guard let byte = peek(), (position == 0 ? second : 0x80...0xBF).contains(byte) else {
        throw invalidJSON()
      }
      index += 1
    }
  }

  private mutating func skipLiteral(_ literal: StaticString) throws(Failure) {
    let count = literal.utf8CodeUnitCount
    guard index + count <= bytes.count else { throw invalidJSON() }
    for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
      throw invalidJSON()
    }
    index += count
  }

  private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
    guard bytes.count == name.utf8CodeUnitCount, let base = bytes.baseAddress else {
      return bytes.isEmpty && name.utf8CodeUnitCount == 0
    }
    return memcmp(base, name.utf8Start, bytes.count) == 0
  }

  private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipSpace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func expect(_ byte: UInt8) throws(Failure) {
    guard peek() == byte else { throw invalidJSON() }
    index += 1
  }

  private func invalidJSON() -> Failure {
    Failure(message: "not valid JSON (column \(Swift.min(index, bytes.count) + 1))")
  }
}
