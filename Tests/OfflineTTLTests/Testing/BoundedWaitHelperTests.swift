import OfflineTTLTesting
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The test helpers that wait for threads wait at most their limit, and a thread that outlives
/// it is a failure naming it, not a hang of the run. The stuck thread here is released right
/// after (it waits at most 10 s), so nothing is left running.
@Suite struct BoundedWaitHelperTests {
  final class Flag: Sendable {
    let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
    /// Waits until set, at most 10 s.
    func wait() { for _ in 0..<1_000 where !isSet { usleep(10_000) } }
  }

  @Test func runConcurrentlyNamesTheThreadThatDidNotFinish() {
    let release = Flag()
    var hung: [Int] = []
    withKnownIssue("the timeout is recorded as a failure") {
      hung = runConcurrently(3, timeout: .milliseconds(300)) { index in
        if index == 1 { release.wait() }
      }
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("thread(s) [1] of 3 did not finish") }
    }
    release.set()
    #expect(hung == [1])
    #expect(runConcurrently(3, timeout: .seconds(60)) { _ in }.isEmpty)
  }

  @Test(.enabled(if: ThreadUmask.isSupported, "needs Linux (unshare(CLONE_FS))"))
  func threadUmaskThrowsWhenTheBodyDoesNotReturnInTime() throws {
    let release = Flag()
    do {
      _ = try ThreadUmask.run(umask: 0o022, timeout: .milliseconds(300)) { () -> Int in
        release.wait()
        return 1
      }
      Issue.record("returned although the body was still running")
    } catch let failure as ThreadUmask.Failure {
      #expect(failure.description.contains("did not finish within"), "\(failure)")
    }
    release.set()
    #expect(try ThreadUmask.run(umask: 0o022) { 7 } == 7)
  }
}
