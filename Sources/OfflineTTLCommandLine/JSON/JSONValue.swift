import OfflineTTL

/// A JSON value for `--json` output, written deterministically: objects keep the order their
/// keys were given in (no dictionary reordering), no spaces, integers exactly (no `Double`).
///
/// Instants follow one convention everywhere: ``JSONObject/instant(_:_:)`` writes a key `x` as
/// RFC 3339 text and `x_ns` as integer nanoseconds since the epoch.
enum JSONValue: Equatable {
  case null
  case bool(Bool)
  case integer(Int64)
  case unsignedInteger(UInt64)
  case string(String)
  case array([JSONValue])
  indirect case object(JSONObject)

  /// The value as one line of compact JSON.
  var text: String {
    var bytes: [UInt8] = []
    write(to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the value's compact JSON.
  ///
  /// - Complexity: O(size of the value).
  func write(to bytes: inout [UInt8]) {
    switch self {
    case .null: bytes.append(contentsOf: "null".utf8)
    case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
    case .integer(let value): bytes.append(contentsOf: String(value).utf8)
    case .unsignedInteger(let value): bytes.append(contentsOf: String(value).utf8)
    case .string(let value): JSONValue.writeString(value, to: &bytes)
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        element.write(to: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object): object.write(to: &bytes)
    }
  }

  /// Appends `value` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`,
  /// `\r`, `\b`, `\f` or `\u00XX`; everything else as UTF-8 (RFC 8259 section 7).
  static func writeString(_ value: String, to bytes: inout [UInt8]) {
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    bytes.append(UInt8(ascii: "\""))
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
      case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
      case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
      case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
      case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
      case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
      case 0x00..<0x20:
        bytes.append(contentsOf: #"\u00"#.utf8)
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.integer(let a), .integer(let b)): a == b
    case (.unsignedInteger(let a), .unsignedInteger(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    default: false
    }
  }
}

/// A JSON object whose keys are written in the order they were added.
struct JSONObject: Equatable {
  /// The keys, in output order.
  private(set) var keys: [String] = []
  /// The values, parallel to ``keys``.
  private(set) var values: [JSONValue] = []

  init() {}

  /// Creates an object from members in output order.
  init(_ members: KeyValuePairs<String, JSONValue>) {
    for (key, value) in members { self[key] = value }
  }

  /// Sets `key`: replaces the value in place when the key exists, appends it otherwise;
  /// `nil` removes it.
  subscript(key: String) -> JSONValue? {
    get { keys.firstIndex(of: key).map { values[$0] } }
    set {
      if let index = keys.firstIndex(of: key) {
        if let newValue {
          values[index] = newValue
        } else {
          keys.remove(at: index)
          values.remove(at: index)
        }
      } else if let newValue {
        keys.append(key)
        values.append(newValue)
      }
    }
  }

  /// Adds an instant as two keys: `key` (RFC 3339 text) and `key_ns` (integer nanoseconds);
  /// both are `null` for `nil`.
  mutating func instant(_ key: String, _ instant: WallClockInstant?) {
    self[key] = instant.map { .string($0.rfc3339) } ?? .null
    self[key + "_ns"] = instant.map { .integer($0.nanosecondsSinceEpoch) } ?? .null
  }

  /// The object as one line of compact JSON.
  var text: String { JSONValue.object(self).text }

  /// Appends the object's compact JSON.
  func write(to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "{"))
    for index in keys.indices {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      JSONValue.writeString(keys[index], to: &bytes)
      bytes.append(UInt8(ascii: ":"))
      values[index].write(to: &bytes)
    }
    bytes.append(UInt8(ascii: "}"))
  }
}
