import Foundation
import OfflineTTLTesting
import Testing

/// The binary against an independent model of the eligibility rule (Support/eligibility_model.py): at least
/// 100,000 random cases biased toward boundaries, through `offline-ttl evaluate --batch --unit
/// ns`, with status, mark and reasons compared exactly.
@Suite struct DifferentialTests {
  static let caseCount = 120_000

  @Test(.enabled(if: toolPath("python3") != nil, "python3 is not installed (Debian: python3)"))
  func evaluateBatchAgreesWithTheEligibilityModelOnEveryCase() throws {
    let python = try #require(toolPath("python3"))
    let model = BinaryRunner.supportDirectory.appendingPathComponent("eligibility_model.py").path
    let work = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-differential")
    defer { work.remove() }
    let cases = URL(fileURLWithPath: work.appending("cases.jsonl"))
    let actual = URL(fileURLWithPath: work.appending("actual.jsonl"))

    let tool = BinaryRunner(path: python)
    let generated = try tool.run(
      [model, "generate", "--count", "\(Self.caseCount)", "--seed", "20261130"],
      timeout: .seconds(300))
    #expect(generated.exitCode == 0, "\(generated.standardError)")
    let generatedCases = Data(generated.standardOutput.utf8)
    try generatedCases.write(to: cases)

    let binary = try BinaryRunner()
    let run = try binary.run(
      ["evaluate", "--batch", "--unit", "ns"], standardInput: generatedCases,
      timeout: .seconds(300))
    #expect(!run.timedOut)
    #expect(run.exitCode == 0, "every generated line is valid: \(run.standardError)")
    #expect(run.standardError == "")
    try Data(run.standardOutput.utf8).write(to: actual)

    let checked = try tool.run([model, "check", cases.path, actual.path], timeout: .seconds(300))
    let summaryText = checked.standardOutput
    let summary = try checked.jsonObject()
    #expect(summary["cases"] as? Int == Self.caseCount)
    #expect(summary["mismatches"] as? Int == 0, "\(summaryText)")
    #expect(summary["extra_lines"] as? Int == 0)
    #expect(checked.exitCode == 0)
    // The generator really hit the boundaries it is meant to.
    let boundaries = try #require(summary["boundary_counts"] as? [String: Int])
    for (name, count) in boundaries {
      #expect(count >= 1000, "boundary \(name) hit only \(count) times")
    }
    print("differential: \(Self.caseCount) cases, binary took \(run.elapsed)")
  }
}
