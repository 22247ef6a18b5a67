import Foundation
import Testing

extension BinaryResult {
  /// Standard output parsed as one JSON object (a `--json` line, a summary).
  ///
  /// - Throws: When it is not JSON or not an object (recorded as a test issue naming the output).
  func jsonObject() throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(standardOutput.utf8)) as? [String: Any],
      "\(standardOutput)")
  }

  /// The integer member `key` of ``jsonObject()``, e.g. `mark_ns`.
  ///
  /// - Throws: When the output is not a JSON object or `key` is not an integer in it.
  func jsonInt64(_ key: String) throws -> Int64 {
    let object = try jsonObject()
    return try #require((object[key] as? NSNumber)?.int64Value, "\(key) in \(object)")
  }
}
