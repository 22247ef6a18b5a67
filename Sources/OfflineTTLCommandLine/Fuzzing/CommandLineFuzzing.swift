import Foundation
import OfflineTTL

/// Fuzz entry points for the command line's readers of outside text: package API, called by the
/// `offline-ttl-fuzz` libFuzzer target (`Scripts/fuzz.sh`) and by the regression tests that
/// replay each input it found.
///
/// Each takes arbitrary bytes and returns the promises the reader broke, as sentences (empty when
/// all held); a crash is a crash.
///
/// - Complexity: O(n) in the input's length.
package enum CommandLineFuzzing {
  /// One `evaluate --batch` line (``BatchLineParser`` and the result line after it).
  ///
  /// Promises: a line that is accepted is a JSON object (Foundation's `JSONSerialization` reads
  /// it), its result line is a JSON object, and the case written back as a plain line in the same
  /// unit reads as the same case.
  ///
  /// - Parameter input: A unit byte (`s`, `ms`, `ns` by its value modulo 3), then the line.
  /// - Returns: The broken promises; empty when every promise held.
  package static func batchLine(_ input: [UInt8]) -> [String] {
    guard let mode = input.first else { return [] }
    let unit = TimeUnit.allCases[Int(mode) % TimeUnit.allCases.count]
    let line = Array(input.dropFirst())
    var problems: [String] = []
    var result: [UInt8] = []
    let outcome = line.withUnsafeBufferPointer {
      EvaluateBatch.evaluateLine($0, unit: unit, into: &result)
    }
    guard case .valid = outcome else { return [] }
    if !isJSONObject(line) {
      problems.append("batch line: accepted a line that is not a JSON object")
    }
    if !isJSONObject(result) {
      problems.append("batch line: the result line is not a JSON object")
    }
    guard
      let parsed = try? line.withUnsafeBufferPointer({
        try BatchLineParser.parse($0, unit: unit)
      })
    else {
      problems.append("batch line: the evaluation accepted a line the parser refuses")
      return problems
    }
    let plain = plainLine(parsed, unit: unit)
    guard
      let again = try? plain.withUnsafeBufferPointer({
        try BatchLineParser.parse($0, unit: unit)
      })
    else {
      problems.append(
        "batch line: the case written back does not parse: \(String(decoding: plain, as: UTF8.self))"
      )
      return problems
    }
    if again.now != parsed.now || again.mark != parsed.mark || again.maxAge != parsed.maxAge
      || again.items.oldest != parsed.items.oldest || again.items.newest != parsed.items.newest
      || (again.items.count == 0) != (parsed.items.count == 0)
    {
      problems.append("batch line: the case written back reads as another case")
    }
    return problems
  }

  /// One duration with units (``DurationParser``).
  ///
  /// Promises: a refusal is `invalid_duration` or `out_of_range`; an accepted duration is not
  /// negative, and its shortest spelling (as `status` prints it) reads back as itself.
  ///
  /// - Parameter input: The text's bytes (invalid UTF-8 is replaced, as `String(decoding:)` does).
  /// - Returns: The broken promises; empty when every promise held.
  package static func duration(_ input: [UInt8]) -> [String] {
    let text = String(decoding: input, as: UTF8.self)
    let duration: Duration
    do {
      duration = try DurationParser.parse(text)
    } catch {
      if error.code != .invalidDuration && error.code != .outOfRange {
        return ["duration: '\(text)' was refused with code \(error.code)"]
      }
      return []
    }
    var problems: [String] = []
    if duration < .zero { problems.append("duration: '\(text)' read as negative") }
    let spelled = StoreCommandSupport.durationText(duration)
    if (try? DurationParser.parse(spelled)) != duration {
      problems.append("duration: '\(text)' is spelled '\(spelled)', which reads differently")
    }
    return problems
  }

  /// The case as a line of the four members, every value in `unit`.
  private static func plainLine(_ parsed: BatchLineParser.Case, unit: TimeUnit) -> [UInt8] {
    func count(_ instant: WallClockInstant) -> String {
      String(instant.nanosecondsSinceEpoch / unit.nanoseconds)
    }
    var items: [String] = []
    if let oldest = parsed.items.oldest, let newest = parsed.items.newest {
      items = [count(oldest), count(newest)]
    }
    let mark = parsed.mark.map(count) ?? "null"
    // A max age can exceed Int64 nanoseconds (it is an Int64 count of a coarser unit), so it is
    // written back from its components rather than from its nanoseconds.
    let (seconds, attoseconds) = parsed.maxAge.components
    let maxAge = String(
      Int128(seconds) * Int128(1_000_000_000 / unit.nanoseconds)
        + Int128(attoseconds) / (Int128(unit.nanoseconds) * 1_000_000_000))
    let text =
      #"{"written_at":[\#(items.joined(separator: ","))],"now":\#(count(parsed.now)),"#
      + #""mark":\#(mark),"max_age":\#(maxAge)}"#
    return Array(text.utf8)
  }

  private static func isJSONObject(_ bytes: [UInt8]) -> Bool {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
  }
}
