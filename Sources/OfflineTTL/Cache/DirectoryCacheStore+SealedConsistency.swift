import Synchronization

/// Reading a sealed set consistently while online sign-ins commit.
///
/// A sealed set is judged by two files read at two moments: the clock mark (its generation and
/// store id) and the index (bound to them), then the item (bound to the index entry). The
/// offline reads take no lock of the item store on their fast path, so an online sign-in or a
/// session commit may fall between two of those reads: the mark read before a commit and the
/// index written after it (`it belongs to generation g+1, the clock mark to g`), an index read
/// before a roll forward and an item renamed in by it (`from generation g+1, the index expects
/// g`), a key the roll forward removed, or one it added. Each of those is what a forgery looks
/// like too, so none is refused from that first, unlocked look: the whole read is done again
/// holding `cache/lock` shared (``withSharedCacheLock(_:_:)``). Every writer (sign-in, session
/// commit, mark reset, roll forward) holds that lock exclusively from its first step to its
/// last, and moves the mark's generation only inside it, so under the shared lock the mark,
/// `pending`, the staging, the index and the items are all of one moment, and what still
/// disagrees is refused.
extension DirectoryCacheStore {
  /// Where a test may run code in the middle of a sealed read (``sealedReadHook``), to force an
  /// interleaving with a commit deterministically (internal: tests reach it with
  /// `@testable import`).
  enum SealedReadPoint: String, Sendable, CaseIterable, CustomStringConvertible {
    /// In the gate's check, after the index header was read without the mark
    /// (``summaryIfSettledDeferringBinding()``), before the caller observes the mark.
    case afterDeferredIndex
    /// After the mark's generation and store id were read, before `pending` and the index are.
    case afterMarkBinding
    /// After the index was read and verified, before the item's file is opened.
    case beforeItemFile

    var description: String { rawValue }
  }

  /// Runs a body once at each of its points, the first time a sealed read on this task reaches
  /// it (tests only; bind it with `DirectoryCacheStore.$sealedReadHook.withValue(...)`). The
  /// body runs with no hook bound, so the commit it makes is not interrupted itself.
  final class SealedReadHook: Sendable {
    private let bodies: Mutex<[SealedReadPoint: @Sendable () -> Void]>

    /// Creates a hook that runs each body once at its point.
    ///
    /// - Parameter bodies: What runs where (on the reading thread; the read holds no lock of
    ///   the item store then, and no lock of the mark store).
    init(_ bodies: [SealedReadPoint: @Sendable () -> Void]) {
      self.bodies = Mutex(bodies)
      Self.made.add(1, ordering: .relaxed)
    }

    /// How many hooks this process made: while none was, no task can have one bound, and a
    /// sealed read does not look for one (a task-local lookup per read).
    static let made = Atomic<Int>(0)

    /// The points whose body has not run yet.
    var pending: Set<SealedReadPoint> { bodies.withLock { Set($0.keys) } }

    func reach(_ point: SealedReadPoint) {
      guard let run = bodies.withLock({ $0.removeValue(forKey: point) }) else { return }
      DirectoryCacheStore.$sealedReadHook.withValue(nil) { run() }
    }
  }

  /// The test hook of sealed reads on this task, or `nil` (always, outside tests).
  @TaskLocal static var sealedReadHook: SealedReadHook?

  /// Runs the test hook bound to this task at `point`, if any.
  func reachSealedRead(_ point: SealedReadPoint) {
    guard SealedReadHook.made.load(ordering: .relaxed) != 0 else { return }
    Self.sealedReadHook?.reach(point)
  }

  /// Runs `body` holding `cache/lock` shared, so that no writer is between its first and last
  /// step while `body` reads (see the extension's discussion). A lock file that is missing or
  /// cannot be locked is not waited for (`body` then runs without it: nothing has ever been
  /// committed under it, or it cannot be, and what `body` finds is judged as it is); one that is
  /// another user's or writable by others is `insecure_store`; one that another thread or process
  /// holds past ``lockTimeout`` is `lock_timed_out` (`body` does not run).
  ///
  /// - Throws: `insecure_store`, `lock_timed_out`, or what `body` throws.
  /// - Complexity: One secure open and one `flock`, plus `body`; waits while a sign-in holds
  ///   the lock, at most ``lockTimeout``.
  func withSharedCacheLock<Result>(
    _ cache: StoreDirectory, _ body: () throws(StoreError) -> Result
  ) throws(StoreError) -> Result {
    var lock: OpenedStoreFile? = nil
    do {
      lock = try files.openFile(cache, Self.lockName, .readOnly)
    } catch  where error.isInsecure {
      throw failure(error, .lockFailed)
    } catch {}
    defer { if let lock { files.close(lock.fd) } }
    if let lock { _ = try lockSharedUnlessTimedOut(lock, in: cache) }
    return try body()
  }

  /// Takes `cache/lock` shared, waiting at most ``lockTimeout``.
  ///
  /// - Returns: Whether the lock is held; `false` when it could not be taken for another reason
  ///   than the time limit (the caller then reads without it, as documented where it is used).
  /// - Throws: `lock_timed_out` when another thread or process held it past ``lockTimeout``.
  func lockSharedUnlessTimedOut(_ lock: OpenedStoreFile, in cache: StoreDirectory)
    throws(StoreError) -> Bool
  {
    do {
      try files.lockShared(
        lock.fd, path: cache.path(of: Self.lockName), waitingAtMost: lockTimeout)
      return true
    } catch  where error.errno == .timedOut {
      throw failure(error, .lockFailed)
    } catch {
      return false
    }
  }
}

/// One look at a sealed set: the set, no set (an empty store), or a disagreement between the
/// mark, the index and the items that a concurrent commit can explain (judged again under the
/// shared lock before it is refused).
enum SealedSetRead {
  case set(header: CacheSeal.Header, index: CacheSeal.Index, staging: String?)
  case empty
  case disagreement(StoreError)
}

/// One read of a sealed item: the item (or `nil`: no such key), or a disagreement between the
/// index and the item file that a concurrent commit can explain.
enum SealedItemRead {
  case item(CacheItem?)
  case disagreement(StoreError)
}
