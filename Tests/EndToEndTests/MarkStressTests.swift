import Dispatch
import Foundation
import OfflineTTL
import OfflineTTLTesting
import Synchronization
import Testing

/// Many OS processes of the built `offline-ttl mark` sharing one store directory.
///
/// Each observer process is one `offline-ttl mark observe` with 500 `--now` values (the command
/// observes them in order, each under its own lock, printing each acknowledged result): this
/// keeps the test fast (8 process starts instead of 4,000) while every observation still takes
/// the cross-process lock separately and interleaves with the other processes.
@Suite struct MarkStressTests {
  static let observers = 8
  static let observationsPerProcess = 500
  static let resets = 5
  static let base: Int64 = 1_700_000_000

  @Test func eightProcessesObservingWithResetsKeepTheInvariants() throws {
    let dir = try TemporaryStoreDirectory(prefix: "mark-stress")
    defer { dir.remove() }
    let binary = try BinaryRunner()
    let initial = try binary.run(["mark", "reset", "--dir", dir.path, "--now", "\(Self.base)"])
    #expect(initial.exitCode == 0, "\(initial.standardError)")
    var plans: [[Int64]] = []
    var random = SystemRandomNumberGenerator()
    for _ in 0..<Self.observers {
      var nows: [Int64] = []
      var now = Self.base
      for _ in 0..<Self.observationsPerProcess {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: now -= Int64.random(in: 1_000_000...50_000_000, using: &random)  // far back
        case 1: now += Int64.random(in: 100_000...5_000_000, using: &random)  // far ahead
        default: now += Int64.random(in: -30...60, using: &random)
        }
        nows.append(now)
      }
      plans.append(nows)
    }
    let nowPlans = plans
    let history = Mutex(MarkHistory())
    history.withLock {
      $0.append(
        .init(
          isReset: true, actor: 99, now: Self.t(Self.base), mark: Self.t(Self.base), generation: 1))
    }
    let problems = Mutex([String]())
    runConcurrently(Self.observers + 1) { actor in
      do {
        if actor == Self.observers {
          for round in 0..<Self.resets {
            usleep(UInt32.random(in: 20_000...120_000))
            let now = Self.base - 1_000 * Int64(round + 1)
            let output = try binary.run([
              "mark", "reset", "--dir", dir.path, "--now", "\(now)",
            ])
            guard output.exitCode == 0,
              let line = MarkOutputLines.parse(output.standardOutput).first
            else {
              problems.withLock {
                $0.append(
                  "reset exited \(output.exitCode.map(String.init) ?? "killed"): \(output.standardError)"
                )
              }
              continue
            }
            history.withLock {
              $0.append(
                .init(
                  isReset: true, actor: actor, now: Self.t(now), mark: Self.t(line.mark),
                  generation: line.generation))
            }
          }
          return
        }
        let nows = nowPlans[actor]
        let output = try binary.run(
          ["mark", "observe", "--dir", dir.path] + nows.flatMap { ["--now", "\($0)"] })
        let lines = MarkOutputLines.parse(output.standardOutput)
        guard output.exitCode == 0, lines.count == nows.count else {
          problems.withLock {
            $0.append(
              "observer \(actor) exited \(output.exitCode.map(String.init) ?? "killed") after \(lines.count) lines: \(output.standardError)"
            )
          }
          return
        }
        history.withLock { history in
          for (now, line) in zip(nows, lines) {
            history.append(
              .init(
                isReset: false, actor: actor, now: Self.t(now), mark: Self.t(line.mark),
                generation: line.generation))
          }
        }
      } catch {
        problems.withLock { $0.append("actor \(actor): \(error)") }
      }
    }
    #expect(problems.withLock { $0 } == [])
    let final = try FileClockMarkStore(atPath: dir.path).read()
    #expect(final.generation == UInt64(1 + Self.resets))
    let events = history.withLock { $0.events.count }
    #expect(events == 1 + Self.resets + Self.observers * Self.observationsPerProcess)
    #expect(history.withLock { $0.violations(final: final) } == [])
    let generationsSeen = Set(
      history.withLock { $0.events.filter { !$0.isReset }.map(\.generation) })
    #expect(generationsSeen.count >= 2, "the resets interleaved with the observers")
  }

  static func t(_ seconds: Int64) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: seconds * 1_000_000_000)
  }
}
