import OfflineTTL

/// `offline-ttl evaluate --batch`: JSON Lines in, one result line out per case, in order.
enum EvaluateBatch {
  /// Reads every line of standard input and writes one result line per non-blank line: the
  /// result object, or `{"error":"line N: ..."}` for a line that is not a valid case.
  ///
  /// - Returns: 0 when every non-blank line was a valid case, 65 otherwise.
  /// - Throws: ``CommandFailure`` (74) when standard input cannot be read.
  /// - Complexity: O(input size); memory O(longest line).
  static func run(unit: TimeUnit, context: CommandContext) throws -> ExitCode {
    var anyBad = false
    var lineNumber = 0
    var line: [UInt8] = []
    line.reserveCapacity(256)
    let output = context.standardOutput
    let input = context.standardInput
    while let outcome = input.withNextLine({ bytes in
      input.lastLineWasCut
        ? .invalid("longer than \(input.maximumLineLength) bytes; skipped")
        : evaluateLine(bytes, unit: unit, into: &line)
    }) {
      lineNumber += 1
      switch outcome {
      case .blank: continue
      case .valid:
        line.append(UInt8(ascii: "\n"))
        output.write(bytes: line)
      case .invalid(let message):
        anyBad = true
        output.write(bytes: errorLine(lineNumber, message))
        output.write(byte: UInt8(ascii: "\n"))
      }
    }
    if let error = context.standardInput.readError {
      throw CommandFailure(.ioError, "cannot read standard input (errno \(error))")
    }
    return anyBad ? .dataError : .success
  }

  /// What one input line gave.
  enum LineOutcome {
    /// Only spaces, tabs or a carriage return: skipped, no output.
    case blank
    /// A valid case; its result line is in the buffer.
    case valid
    /// Not a valid case, with the reason.
    case invalid(String)
  }

  /// Evaluates one line, leaving its result line (without newline) in `line`.
  static func evaluateLine(
    _ bytes: UnsafeBufferPointer<UInt8>, unit: TimeUnit, into line: inout [UInt8]
  ) -> LineOutcome {
    var blank = true
    for byte in bytes where byte != 0x20 && byte != 0x09 && byte != 0x0D {
      blank = false
      break
    }
    if blank { return .blank }
    let parsed: BatchLineParser.Case
    do {
      parsed = try BatchLineParser.parse(bytes, unit: unit)
    } catch {
      return .invalid(error.message)
    }
    // The parser rejected a negative max age, so this cannot throw.
    guard let policy = try? EligibilityPolicy(maxAge: parsed.maxAge) else {
      return .invalid("max_age: must be zero or more")
    }
    line.removeAll(keepingCapacity: true)
    Evaluate.appendResultLine(
      policy.evaluate(parsed.items, now: parsed.now, mark: parsed.mark), unit: unit, to: &line)
    return .valid
  }

  /// `{"error":"line N: <message>"}`.
  static func errorLine(_ lineNumber: Int, _ message: String) -> [UInt8] {
    var bytes: [UInt8] = []
    JSONObject(["error": .string("line \(lineNumber): \(message)")]).write(to: &bytes)
    return bytes
  }
}
