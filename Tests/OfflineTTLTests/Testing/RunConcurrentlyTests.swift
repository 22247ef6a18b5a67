import OfflineTTLTesting
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct RunConcurrentlyTests {
  @Test func allThreadsRunAtTheSameTimeEvenOnTwoCores() {
    let arrived = Mutex(0)
    let sawEveryone = Mutex(0)
    runConcurrently(12) { _ in
      arrived.withLock { $0 += 1 }
      // Wait (bounded, 10 s) until all 12 are inside at once: only possible if each thread has
      // its own thread.
      for _ in 0..<10_000 where arrived.withLock({ $0 }) < 12 { usleep(1_000) }
      if arrived.withLock({ $0 }) == 12 { sawEveryone.withLock { $0 += 1 } }
    }
    #expect(sawEveryone.withLock { $0 } == 12)
  }
}
