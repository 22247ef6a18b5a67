import Testing

@testable import OfflineTTLCommandLine

@Suite struct EvaluateBatchTests {
  @Test func oneResultLinePerCaseInOrderBlankLinesSkipped() {
    let input = """
      {"written_at":[100],"now":190,"mark":200,"max_age":1000}

      {"written_at":[],"now":1,"mark":null,"max_age":0}
        \t
      {"written_at":[100],"now":1100,"mark":null,"max_age":1000}
      """
    let run = runCommand(["evaluate", "--batch"], input: input)
    #expect(run.exitCode == .success)
    #expect(
      run.standardOutput == """
        {"status":"expired","mark":200,"reasons":["clock_behind_mark"]}
        {"status":"unavailable","mark":null,"reasons":[]}
        {"status":"fresh","mark":1100,"reasons":[]}

        """)
    #expect(run.standardError == "")
  }

  @Test func aBadLineGetsAnErrorLineProcessingContinuesAndTheExitIs65() {
    let input = """
      {"written_at":[1],"now":2,"mark":null,"max_age":-1}
      not json
      {"written_at":[1],"now":2,"mark":null,"max_age":1}
      """
    let run = runCommand(["evaluate", "--batch"], input: input)
    #expect(run.exitCode == .dataError)
    #expect(
      run.standardOutput == """
        {"error":"line 1: max_age: -1 is negative; a max age must be zero or more"}
        {"error":"line 2: not valid JSON (column 1)"}
        {"status":"fresh","mark":2,"reasons":[]}

        """)
  }

  @Test func aMaxAgeBeyondInt64NanosecondsIsAMalformedLine() {
    let input = """
      {"written_at":[1],"now":2,"mark":null,"max_age":9223372037}
      {"written_at":[1],"now":2,"mark":null,"max_age":9223372036}
      """
    let run = runCommand(["evaluate", "--batch"], input: input)
    #expect(run.exitCode == .dataError)
    #expect(
      run.standardOutput == """
        {"error":"line 1: max_age: 9223372037s does not fit in Int64 nanoseconds (the largest max age is 9223372036s, about 292 years)"}
        {"status":"fresh","mark":2,"reasons":[]}

        """)
  }

  @Test func unitAppliesToEveryLineAndOutOfRangeIsPerLine() {
    let input = """
      {"written_at":[1],"now":2,"mark":null,"max_age":1}
      {"written_at":[9223372036855],"now":2,"mark":null,"max_age":1}
      """
    let run = runCommand(["evaluate", "--batch", "--unit", "ms"], input: input)
    #expect(run.exitCode == .dataError)
    #expect(
      run.standardOutput == """
        {"status":"fresh","mark":2,"reasons":[]}
        {"error":"line 2: written_at[0]: 9223372036855ms does not fit in Int64 nanoseconds since the epoch (about years 1677 to 2262)"}

        """)
  }

  @Test func emptyInputIsSuccessWithNoOutput() {
    let run = runCommand(["evaluate", "--batch"], input: "")
    #expect(run.exitCode == .success)
    #expect(run.standardOutput == "")
  }
}
