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
          maxAge = unit.duration(count)
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
    try expect(UInt8(ascii: "\""))
    let start = index
    var escaped = false
    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
      if bytes[index] == UInt8(ascii: "\\") {
        escaped = true
        index += 1
      } else if bytes[index] < 0x20 {
        throw invalidJSON()
      }
      index += 1
    }
    guard index < bytes.count else { throw invalidJSON() }
    let key = UnsafeBufferPointer(rebasing: bytes[start..<index])
    index += 1
    // The four names are plain ASCII; a key written with escapes is treated as another member.
    if escaped { return .other }
    if Self.equal(key, "written_at") { return .writtenAt }
    if Self.equal(key, "now") { return .now }
    if Self.equal(key, "mark") { return .mark }
    if Self.equal(key, "max_age") { return .maxAge }
    return .other
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
      index += 1
      while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
        if bytes[index] < 0x20 { throw invalidJSON() }
        index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
      }
      guard index < bytes.count else { throw invalidJSON() }
      index += 1
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
      // A number: JSON's grammar, checked loosely (its value is never used).
      let start = index
      if peek() == UInt8(ascii: "-") { index += 1 }
      while let next = peek(),
        (next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) || next == UInt8(ascii: ".")
          || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") || next == UInt8(ascii: "+")
          || next == UInt8(ascii: "-")
      {
        index += 1
      }
      guard index > start, bytes[index - 1] >= UInt8(ascii: "0"),
        bytes[index - 1] <= UInt8(ascii: "9")
      else { throw invalidJSON() }
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
