import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child `offline-ttl mark observe` in a tight loop (2,000 rising `--now` values, each line
/// printed and flushed once the mark is durable) is killed with SIGKILL at a random moment (after
/// a random number of acknowledgements plus a random delay), 50 times; after each kill the record must read back valid and at least the last acknowledged mark.
@Suite struct MarkCrashTests {
  static let kills = 50

  @Test func sigkillAtRandomMomentsNeverLosesAnAcknowledgedMark() throws {
    let dir = try TemporaryStoreDirectory(prefix: "mark-crash")
    defer { dir.remove() }
    let base: Int64 = 1_700_000_000
    let binary = try BinaryRunner()
    let reset = try binary.run(["mark", "reset", "--dir", dir.path, "--now", "\(base)"])
    #expect(reset.exitCode == 0)
    var acknowledged = base
    var killedMidRun = 0
    var roundsWithAcknowledgements = 0
    var targets = 0
    var random = SystemRandomNumberGenerator()
    for round in 0..<Self.kills {
      let start = base + Int64(round + 1) * 10_000
      let nows = (0..<2_000).map { start + Int64($0) }
      let child = try binary.start(
        ["mark", "observe", "--dir", dir.path] + nows.flatMap { ["--now", "\($0)"] },
        pipesStandardOutput: true)
      let output = try #require(child.standardOutput)
      // Kill after a random number (0...60) of acknowledgements, plus up to 3 ms: the kill lands
      // inside the observation loop (or, for 0, anywhere from start-up on) however loaded the
      // machine is.
      let target = Int.random(in: 0...60, using: &random)
      var received = Data()
      while received.count(of: UInt8(ascii: "\n")) < target {
        let chunk = output.availableData
        if chunk.isEmpty { break }
        received.append(chunk)
      }
      if target > 0 { targets += 1 }
      usleep(UInt32.random(in: 0...3_000, using: &random))
      child.kill()
      received.append(output.readDataToEndOfFile())
      let text = String(decoding: received, as: UTF8.self)
      if child.waitForExit().exitCode == nil { killedMidRun += 1 }
      // Only complete lines are acknowledgements.
      let complete =
        text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
      if let last = MarkOutputLines.parse(complete).last {
        roundsWithAcknowledgements += 1
        #expect(last.mark >= acknowledged, "round \(round): acknowledged marks rise")
        acknowledged = Swift.max(acknowledged, last.mark)
      }
      do {
        let record = try FileClockMarkStore(atPath: dir.path).read()
        #expect(
          record.mark >= WallClockInstant(nanosecondsSinceEpoch: acknowledged * 1_000_000_000),
          "round \(round): the record holds the last acknowledged mark")
        #expect(record.generation == 1)
      } catch {
        Issue.record("round \(round): the record is unreadable after SIGKILL: \(error)")
      }
    }
    #expect(killedMidRun == Self.kills, "every kill landed while the child was running")
    #expect(acknowledged > base, "some observations were acknowledged")
    #expect(roundsWithAcknowledgements >= targets, "kills landed inside the observation loop")
    print(
      "mark crash test: \(killedMidRun) kills mid-run, \(roundsWithAcknowledgements) after acknowledgements"
    )
  }
}

extension Data {
  fileprivate func count(of byte: UInt8) -> Int { reduce(0) { $0 + ($1 == byte ? 1 : 0) } }
}
