import Dispatch
import Foundation

/// Where the async variants run their blocking work: a concurrent dispatch queue of its own, so
/// a wait on `flock` or `fdatasync` never holds a thread of Swift concurrency's cooperative pool
/// (which has one thread per core and must not block).
enum BlockingStoreWork {
  static let queue = DispatchQueue(
    label: "OfflineTTL.blocking-store-work", qos: .userInitiated, attributes: .concurrent)

  /// Runs `body` on ``queue`` and suspends (not blocks) the caller until it returns.
  ///
  /// The work cannot be cancelled once started (a thread waiting in `flock` cannot be
  /// interrupted safely); task cancellation is not checked.
  ///
  /// - Parameter body: The blocking work.
  /// - Returns: What `body` returned.
  /// - Throws: What `body` threw.
  static func run<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
  ) async throws(Failure) -> Value {
    let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
      queue.async {
        // Dispatch's threads block every signal: let this work's lock waits wait in the kernel.
        let result = Syscalls.allowingKernelLockWaits {
          Result { () throws(Failure) in try body() }
        }
        continuation.resume(returning: result)
      }
    }
    return try result.get()
  }
}

extension OfflineAccessGate {
  /// ``checkEligibility()`` without blocking a thread of the cooperative pool: the store work
  /// (`flock`, `fdatasync`) runs on a dedicated dispatch queue while the caller is suspended.
  ///
  /// - Returns: The decision.
  /// - Complexity: As ``checkEligibility()``, plus one hop to a dispatch queue and back
  ///   (`offline-ttl-bench gate` measures it beside the blocking call; on a loaded two-core
  ///   machine the hop was smaller than the run-to-run noise of a check that writes).
  public func checkEligibilityAsync() async -> OfflineAccessDecision {
    await BlockingStoreWork.run { () -> OfflineAccessDecision in checkEligibility() }
  }

  /// ``openOffline()`` without blocking a thread of the cooperative pool.
  ///
  /// - Returns: As ``openOffline()``.
  public func openOfflineAsync() async -> OfflineOpenResult {
    await BlockingStoreWork.run { () -> OfflineOpenResult in openOffline() }
  }

  /// ``recordObservation()`` without blocking a thread of the cooperative pool.
  ///
  /// - Returns: As ``recordObservation()``.
  /// - Throws: As ``recordObservation()``.
  @discardableResult
  public func recordObservationAsync() async throws(StoreError) -> ClockMarkTransition {
    try await BlockingStoreWork.run { () throws(StoreError) -> ClockMarkTransition in
      try recordObservation()
    }
  }

  /// ``beginOnlineSession()`` without blocking a thread of the cooperative pool.
  ///
  /// - Returns: As ``beginOnlineSession()``.
  /// - Throws: As ``beginOnlineSession()``.
  public func beginOnlineSessionAsync() async throws(OnlineSessionError) -> OnlineSession {
    try await BlockingStoreWork.run { () throws(OnlineSessionError) -> OnlineSession in
      try beginOnlineSession()
    }
  }

  /// ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)`` without blocking a thread of
  /// the cooperative pool: signs in and writes items in one atomic step, the store work (`flock`,
  /// `fdatasync`) on a dedicated dispatch queue while the caller is suspended. Call it only after
  /// the app's server sign-in succeeded.
  ///
  /// - Parameter items: Keys and bytes, stamped as
  ///   ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)`` stamps them (the wall clock
  ///   read under the cache's writer lock); a later duplicate key wins. Items not named are kept.
  /// - Returns: As ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``: the session,
  ///   whose ``OnlineSession/signInWrittenAt`` holds the items' `writtenAt`.
  /// - Throws: As ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``.
  /// - Complexity: As ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``, plus one
  ///   hop to a dispatch queue and back.
  @discardableResult
  public func beginOnlineSessionAsync(writing items: [(CacheItemKey, Data)])
    async
    throws(OnlineSessionError) -> OnlineSession
  {
    try await BlockingStoreWork.run { () throws(OnlineSessionError) -> OnlineSession in
      try beginOnlineSession(writing: items)
    }
  }

  /// ``beginOnlineSession(serverTime:uncertainty:)`` without blocking a thread of the
  /// cooperative pool: signs in anchored at a server time, the store work on a dedicated
  /// dispatch queue while the caller is suspended.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time, from the app's authenticated connection.
  ///   - uncertainty: How far off it may be; zero or more.
  /// - Returns: As ``beginOnlineSession(serverTime:uncertainty:)``.
  /// - Throws: As ``beginOnlineSession(serverTime:uncertainty:)``.
  /// - Complexity: As ``beginOnlineSession(serverTime:uncertainty:)``, plus one hop to a
  ///   dispatch queue and back.
  public func beginOnlineSessionAsync(serverTime: WallClockInstant, uncertainty: Duration)
    async throws(OnlineSessionError) -> OnlineSession
  {
    try await BlockingStoreWork.run { () throws(OnlineSessionError) -> OnlineSession in
      try beginOnlineSession(serverTime: serverTime, uncertainty: uncertainty)
    }
  }

  /// ``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``
  /// without blocking a thread of the cooperative pool: signs in anchored at a server time and
  /// writes items in one atomic step, the store work (`flock`, `fdatasync`) on a dedicated dispatch
  /// queue while the caller is suspended. Call it only after the app's server sign-in succeeded.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time, from the app's authenticated connection.
  ///   - uncertainty: How far off it may be; zero or more.
  ///   - items: Keys and bytes, stamped as
  ///     ``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``
  ///     stamps them (`serverTime − uncertainty − 2 s`); a later duplicate key wins. Items not
  ///     named are kept.
  /// - Returns: As
  ///   ``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``.
  /// - Throws: As
  ///   ``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``.
  /// - Complexity: As
  ///   ``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``,
  ///   plus one hop to a dispatch queue and back.
  @discardableResult
  public func beginOnlineSessionAsync(
    serverTime: WallClockInstant, uncertainty: Duration, writing items: [(CacheItemKey, Data)]
  ) async throws(OnlineSessionError) -> OnlineSession {
    try await BlockingStoreWork.run { () throws(OnlineSessionError) -> OnlineSession in
      try beginOnlineSession(serverTime: serverTime, uncertainty: uncertainty, writing: items)
    }
  }
}

extension OfflineCacheReader {
  /// ``item(forKey:)`` without blocking a thread of the cooperative pool.
  ///
  /// - Parameter key: The item's key.
  /// - Returns: As ``item(forKey:)``.
  /// - Throws: As ``item(forKey:)``.
  public func itemAsync(forKey key: CacheItemKey) async throws(OfflineReadError) -> CacheItem? {
    try await BlockingStoreWork.run { () throws(OfflineReadError) -> CacheItem? in
      try item(forKey: key)
    }
  }

  /// ``keys()`` without blocking a thread of the cooperative pool.
  ///
  /// - Returns: As ``keys()``.
  /// - Throws: As ``keys()``.
  public func keysAsync() async throws(OfflineReadError) -> [CacheItemKey] {
    try await BlockingStoreWork.run { () throws(OfflineReadError) -> [CacheItemKey] in
      try keys()
    }
  }
}

extension OnlineSession {
  /// ``write(contentsOf:)-(Sequence<(CacheItemKey,Data)>)`` without blocking a thread of the
  /// cooperative pool.
  ///
  /// - Parameter items: Keys and bytes; a later duplicate key wins.
  /// - Returns: As ``write(contentsOf:)-(Sequence<(CacheItemKey,Data)>)``.
  /// - Throws: As ``write(contentsOf:)-(Sequence<(CacheItemKey,Data)>)``.
  @discardableResult
  public func writeAsync(contentsOf items: [(CacheItemKey, Data)]) async throws(OnlineSessionError)
    -> WallClockInstant
  {
    try await BlockingStoreWork.run { () throws(OnlineSessionError) -> WallClockInstant in
      try self.write(contentsOf: items)
    }
  }
}
