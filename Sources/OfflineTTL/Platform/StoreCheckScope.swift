import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One operation over the stores (the gate's check) in which they make one change-watch check
/// together (``SharedStoreWatch/view(_:)``). Scopes nest: a scope inside a scope is the outer
/// one.
///
/// The scope belongs to the thread that runs it, for the duration of `body`: a scope is a
/// synchronous operation (the gate's check blocks its thread), so every store call of it runs on
/// that thread, and nothing else runs there until `body` returns. Store work that `body` hands to
/// another thread runs outside the scope and checks the watch for itself (correct, only
/// slower). A thread-specific slot (`pthread_getspecific`) rather than a task-local value: a
/// task-local value allocates its binding on the heap outside an async task, twice per check,
/// and a repeated check is meant to allocate nothing.
enum StoreCheckScope {
  /// The scope of the operation running on this thread: a number no other scope of this process
  /// had, or `0` outside a scope.
  static var current: UInt64 {
    guard let number = pthread_getspecific(slot) else { return 0 }
    return number.load(as: UInt64.self)
  }

  /// The thread-specific slot that holds, while a scope runs on a thread, the address of its
  /// number (in `run`'s frame); `nil` outside a scope. Created once per process.
  private static let slot: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed (\(status)): no thread-specific slot")
    return key
  }()

  private static let counter = Atomic<UInt64>(0)

  /// Runs `body` inside a scope: the current one, or a new one for its duration.
  ///
  /// - Complexity: O(1) besides `body`.
  static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
    -> Result
  {
    if pthread_getspecific(slot) != nil { return try body() }
    let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
    return try withUnsafePointer(to: number) { (address) throws(Failure) -> Result in
      pthread_setspecific(slot, address)
      defer { pthread_setspecific(slot, nil) }
      return try body()
    }
  }
}
