import Foundation
import Testing

@testable import OfflineTTL

/// The gate's check scope (``StoreCheckScope``): one number per operation, held by the thread
/// that runs it, the outer one for a scope inside a scope, and none once the operation ended
/// (returning or throwing) or on another thread.
struct StoreCheckScopeTests {
  struct Failure: Error {}

  /// What the other thread saw. `@unchecked Sendable`: written by that thread before it
  /// signals the semaphore, read by this one after waiting for it.
  final class Seen: @unchecked Sendable {
    var numbers: (UInt64, UInt64) = (1, 0)
  }

  @Test func aScopeHasANumberOfItsOwnOnlyWhileItRuns() {
    #expect(StoreCheckScope.current == 0)
    let first = StoreCheckScope.run { StoreCheckScope.current }
    let second = StoreCheckScope.run { StoreCheckScope.current }
    #expect(first != 0 && second != 0 && first != second)
    #expect(StoreCheckScope.current == 0)
  }

  @Test func aScopeInsideAScopeIsTheOuterOne() {
    let (outer, inner, after) = StoreCheckScope.run { () -> (UInt64, UInt64, UInt64) in
      let outer = StoreCheckScope.current
      let inner = StoreCheckScope.run { StoreCheckScope.current }
      return (outer, inner, StoreCheckScope.current)
    }
    #expect(outer != 0 && inner == outer && after == outer)
    #expect(StoreCheckScope.current == 0)
  }

  @Test func aScopeThatThrowsEndsToo() {
    var inside: UInt64 = 0
    #expect(throws: Failure.self) {
      try StoreCheckScope.run { () throws(Failure) -> Void in
        inside = StoreCheckScope.current
        throw Failure()
      }
    }
    #expect(inside != 0)
    #expect(StoreCheckScope.current == 0)
  }

  /// Another thread, started while a scope runs, is outside it (its store calls check the watch
  /// for themselves) and gets a scope of its own when it runs one.
  @Test func anotherThreadIsNotInTheScope() {
    let (outer, seen) = StoreCheckScope.run { () -> (UInt64, (UInt64, UInt64)) in
      let outer = StoreCheckScope.current
      let done = DispatchSemaphore(value: 0)
      let seen = Seen()
      let thread = Thread {
        seen.numbers = (StoreCheckScope.current, StoreCheckScope.run { StoreCheckScope.current })
        done.signal()
      }
      thread.start()
      done.wait()
      return (outer, seen.numbers)
    }
    #expect(seen.0 == 0, "another thread is outside the scope")
    #expect(seen.1 != 0 && seen.1 != outer, "its own scope has a number of its own")
  }
}
