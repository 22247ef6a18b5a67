import Foundation
import OfflineTTL

/// `offline-ttl evaluate --batch`: JSON Lines in, one result line out per case, in order.
enum EvaluateBatch {
  /// One input line as decoded, before units are applied.
  struct RawCase: Decodable {
    var writtenAt: [Int64]
    var now: Int64
    var mark: Int64?
    var maxAge: Int64

    enum CodingKeys: String, CodingKey {
      case writtenAt = "written_at"
      case now
      case mark
      case maxAge = "max_age"
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      writtenAt = try container.decode([Int64].self, forKey: .writtenAt)
      now = try container.decode(Int64.self, forKey: .now)
      // "mark" must be present; null means first use.
      guard container.contains(.mark) else {
        throw DecodingError.keyNotFound(
          CodingKeys.mark, .init(codingPath: [], debugDescription: "missing field"))
      }
      mark = try container.decodeIfPresent(Int64.self, forKey: .mark)
      maxAge = try container.decode(Int64.self, forKey: .maxAge)
    }
  }

  /// Reads every line of standard input and writes one result line per non-blank line.
  ///
  /// - Returns: 0 when every non-blank line was a valid case, 65 otherwise.
  /// - Throws: ``CommandFailure`` (74) when standard input cannot be read.
  static func run(unit: TimeUnit, context: CommandContext) throws -> ExitCode {
    let decoder = JSONDecoder()
    var anyBad = false
    var lineNumber = 0
    let output = context.standardOutput
    while let line = context.standardInput.withNextLine({ Data(buffer: $0) }) {
      lineNumber += 1
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
      let result: [UInt8]
      do {
        let raw = try decoder.decode(RawCase.self, from: line)
        result = try evaluate(raw, unit: unit)
      } catch let error as DecodingError {
        anyBad = true
        result = errorLine(lineNumber, describe(error))
      } catch let error as BatchLineError {
        anyBad = true
        result = errorLine(lineNumber, error.message)
      }
      output.write(bytes: result)
      output.write(byte: UInt8(ascii: "\n"))
    }
    if let error = context.standardInput.readError {
      throw CommandFailure(.ioError, "cannot read standard input (errno \(error))")
    }
    return anyBad ? .dataError : .success
  }

  /// A line that decoded but holds a value the policy cannot take.
  struct BatchLineError: Error {
    var message: String
  }

  /// Applies `unit` and the policy to one decoded case.
  static func evaluate(_ raw: RawCase, unit: TimeUnit) throws(BatchLineError) -> [UInt8] {
    func instant(_ value: Int64, _ field: String) throws(BatchLineError) -> WallClockInstant {
      do {
        return try WallClockInstant(value, unit)
      } catch {
        throw BatchLineError(message: "\(field): \(error.reason)")
      }
    }
    guard raw.maxAge >= 0 else {
      throw BatchLineError(
        message: "max_age: \(raw.maxAge) is negative; a max age must be zero or more")
    }
    var summary = ItemTimeSummary.empty
    for (index, value) in raw.writtenAt.enumerated() {
      summary = summary.adding(try instant(value, "written_at[\(index)]"))
    }
    let now = try instant(raw.now, "now")
    let mark = try raw.mark.map { (value) throws(BatchLineError) in try instant(value, "mark") }
    let policy: EligibilityPolicy
    do {
      policy = try EligibilityPolicy(maxAge: unit.duration(raw.maxAge))
    } catch {
      throw BatchLineError(message: "max_age: \(error.reason)")
    }
    return Evaluate.resultLine(policy.evaluate(summary, now: now, mark: mark), unit: unit)
  }

  /// `{"error":"line N: <message>"}`.
  static func errorLine(_ lineNumber: Int, _ message: String) -> [UInt8] {
    var bytes: [UInt8] = []
    JSONObject(["error": .string("line \(lineNumber): \(message)")]).write(to: &bytes)
    return bytes
  }

  private static func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
      context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }
    switch error {
    case .keyNotFound(let key, _):
      return "missing field \"\(key.stringValue)\""
    case .valueNotFound(_, let context):
      return "\(path(context)): must not be null"
    case .typeMismatch(_, let context):
      return "\(path(context)): not an integer (or array of integers)"
    case .dataCorrupted(let context):
      if context.codingPath.isEmpty { return "not valid JSON" }
      return "\(path(context)): not an integer that fits in 64 bits"
    @unknown default:
      return "not a valid case"
    }
  }
}
