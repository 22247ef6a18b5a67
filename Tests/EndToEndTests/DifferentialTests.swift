import Foundation
import Testing

/// The binary against an independent model of the seed's rule (Support/seed_model.py): at least
/// 100,000 random cases biased toward boundaries, through `offline-ttl evaluate --batch --unit
/// ns`, with status, mark and reasons compared exactly.
@Suite struct DifferentialTests {
  static let caseCount = 120_000

  @Test func evaluateBatchAgreesWithTheSeedModelOnEveryCase() throws {
    guard let python = requireTool("python3") else { return }
    let model = BinaryRunner.supportDirectory.appendingPathComponent("seed_model.py").path
    let work = try TemporaryFile(contents: Data(), name: "unused")
    defer { work.remove() }
    let cases = work.directory.appendingPathComponent("cases.jsonl")
    let actual = work.directory.appendingPathComponent("actual.jsonl")

    let generated = try runTool(
      python, [model, "generate", "--count", "\(Self.caseCount)", "--seed", "20261130"])
    #expect(generated.status == 0, "\(generated.error)")
    try generated.output.write(to: cases)

    let binary = try BinaryRunner()
    let run = try binary.run(
      ["evaluate", "--batch", "--unit", "ns"], standardInput: generated.output,
      timeout: .seconds(300))
    #expect(!run.timedOut)
    #expect(run.exitCode == 0, "every generated line is valid: \(run.standardError)")
    #expect(run.standardError == "")
    try Data(run.standardOutput.utf8).write(to: actual)

    let checked = try runTool(python, [model, "check", cases.path, actual.path])
    let summaryText = String(decoding: checked.output, as: UTF8.self)
    let summary = try #require(
      try JSONSerialization.jsonObject(with: checked.output) as? [String: Any], "\(summaryText)")
    #expect(summary["cases"] as? Int == Self.caseCount)
    #expect(summary["mismatches"] as? Int == 0, "\(summaryText)")
    #expect(summary["extra_lines"] as? Int == 0)
    #expect(checked.status == 0)
    // The generator really hit the boundaries it is meant to.
    let boundaries = try #require(summary["boundary_counts"] as? [String: Int])
    for (name, count) in boundaries {
      #expect(count >= 1000, "boundary \(name) hit only \(count) times")
    }
    print("differential: \(Self.caseCount) cases, binary took \(run.elapsed)")
  }

  /// Runs a helper tool to completion, output through a temporary file.
  func runTool(_ path: String, _ arguments: [String]) throws -> (
    status: Int32, output: Data, error: String
  ) {
    let out = try TemporaryFile(contents: Data())
    defer { out.remove() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: out.url)
    let errorPipe = Pipe()
    process.standardError = errorPipe
    try process.run()
    let error = errorPipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
      process.terminationStatus, try Data(contentsOf: out.url),
      String(decoding: error, as: UTF8.self)
    )
  }
}
