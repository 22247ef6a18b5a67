import Synchronization

/// A script of failures for the syscall seam, and a trace of the calls made through it: the one
/// place tests inject faults (the role of apple/swift-system's `Internals/Mocking.swift`, but
/// chosen per store instance instead of per thread or process, so tests that inject faults can
/// run in parallel with everything else).
///
/// Hand a plan to a store (for example `FileClockMarkStore(atPath:faults:)`); every system call
/// that store makes first asks the plan whether to fail. A fault names a ``SyscallKind``, which
/// call of that kind to fail (1-based, counted from the plan's creation or its last
/// ``resetCounts()``, retries included), the ``Errno`` to report, and whether the real call runs
/// first (``Timing/afterCall``: the call took effect but reported an error) or not at all
/// (``Timing/beforeCall``). An injected `EINTR` is retried by the seam like a real one, except for
/// `close`.
///
/// ```swift
/// let plan = SyscallFaultPlan()
/// plan.fail(.fdatasync, occurrence: 1, with: .ioError)
/// let store = FileClockMarkStore(atPath: dir, faults: plan)
/// #expect(throws: ClockMarkStoreError.self) { try store.observe(now: t) }
/// print(plan.trace)   // [.openat, .openat, .flock, .openat, .fstat, .pread, ...]
/// ```
///
/// To fail "every step", run the operation once with an empty plan, read ``trace``, then for each
/// index `i` inject a fault at that kind's occurrence number ``occurrence(at:)`` in a fresh plan.
@_spi(Testing)
public final class SyscallFaultPlan: Sendable {
  /// When an injected error is reported.
  public enum Timing: Sendable, Hashable {
    /// The real call is not made; the error is reported as if it failed with no effect.
    case beforeCall
    /// The real call is made (it takes effect), then the error is reported instead of its result.
    /// For `close` the descriptor is always released. Do not combine with `EINTR` for a call that
    /// is not idempotent (`rename`, `unlink`, `mkdir`): a real call that reports `EINTR` had no
    /// effect, and the seam's retry would then fail. Nor with `pwrite` or `write` where the
    /// caller relies on the kernel's contract that a write reporting an error wrote nothing
    /// (the clock mark store does): a write that took partial effect returns a short count,
    /// which ``SyscallFaultPlan/shorten(_:occurrence:to:)`` injects.
    case afterCall
  }

  /// One scripted failure.
  public struct Fault: Sendable, Hashable {
    /// The kind of call to fail.
    public var kind: SyscallKind
    /// Which call of that kind fails, 1-based; `nil` fails every call of that kind.
    public var occurrence: Int?
    /// The error reported.
    public var errno: Errno
    /// Whether the real call runs first.
    public var timing: Timing

    /// Creates a fault.
    ///
    /// - Parameters:
    ///   - kind: The kind of call to fail.
    ///   - occurrence: Which call of that kind, 1-based; `nil` for every call (never combine
    ///     `nil` with `EINTR`: the seam would retry forever).
    ///   - errno: The error reported.
    ///   - timing: Whether the real call runs first; default ``Timing/beforeCall``.
    public init(
      kind: SyscallKind, occurrence: Int?, errno: Errno, timing: Timing = .beforeCall
    ) {
      self.kind = kind
      self.occurrence = occurrence
      self.errno = errno
      self.timing = timing
    }
  }

  struct State: Sendable {
    var faults: [Fault]
    var counts: [SyscallKind: Int] = [:]
    var trace: [SyscallKind] = []
    var injected: [Fault] = []
    var reportedFileSystemType: Int64?
    /// Shortened writes: the occurrence of a kind, and the most bytes that call writes.
    var shortWrites: [SyscallKind: [Int: Int]] = [:]
  }

  private let state: Mutex<State>

  /// Whether a store using this plan may keep a change watch (`StoreChangeWatch`) for its
  /// repeated reads. Off by default, so that a plan traces and fails the checks those reads make
  /// without one (every check by path and descriptor); on, to trace and fail the watched reads.
  public let allowsChangeWatch: Bool

  /// Whether a change watch of a store on an absolute path may also watch the directories above
  /// the store (`SharedStoreWatch`'s path watch), so that a repeated read needs no `lstat` of
  /// the store path. Off by default, so that a plan traces and fails the `lstat` those reads
  /// make without it; on (with ``allowsChangeWatch``), to trace and fail the reads without it.
  public let allowsPathWatch: Bool

  /// Creates a plan.
  ///
  /// - Parameters:
  ///   - faults: The failures to inject; default none (the plan then only traces).
  ///   - allowsChangeWatch: Whether stores using the plan may keep a change watch; default
  ///     `false`.
  ///   - allowsPathWatch: Whether that change watch may watch the directories above the store
  ///     too; default `false`.
  public init(
    _ faults: [Fault] = [], allowsChangeWatch: Bool = false, allowsPathWatch: Bool = false
  ) {
    state = Mutex(State(faults: faults))
    self.allowsChangeWatch = allowsChangeWatch
    self.allowsPathWatch = allowsPathWatch
  }

  /// The file-system type (`f_type`) every successful `fstatfs` through this plan reports
  /// instead of the real one, or `nil` (the default) for the real one: so that a test on ext4
  /// or tmpfs sees what a store on btrfs or NFS would. Set it before the store's first call.
  public var reportedFileSystemType: Int64? {
    get { state.withLock { $0.reportedFileSystemType } }
    set { state.withLock { $0.reportedFileSystemType = newValue } }
  }

  /// Adds a failure.
  ///
  /// - Parameters:
  ///   - kind: The kind of call to fail.
  ///   - occurrence: Which call of that kind, 1-based; `nil` for every call.
  ///   - errno: The error reported.
  ///   - timing: Whether the real call runs first; default ``Timing/beforeCall``.
  public func fail(
    _ kind: SyscallKind, occurrence: Int? = 1, with errno: Errno, timing: Timing = .beforeCall
  ) {
    let fault = Fault(kind: kind, occurrence: occurrence, errno: errno, timing: timing)
    state.withLock { $0.faults.append(fault) }
  }

  /// Makes one `pwrite` of a ``Syscalls/pwriteAll(_:_:at:written:)`` loop short: the real
  /// call writes at most `count` bytes and returns that count, as the kernel does when a file
  /// size limit (`RLIMIT_FSIZE`) or a full disk stops a write part way. The loop then writes the
  /// rest with the next `pwrite`, which a fault added with ``fail(_:occurrence:with:timing:)``
  /// can fail (a short write followed by an error). A `pwrite` that reports an error writes
  /// nothing (the kernel's contract): this is the way to test a write that took partial effect.
  ///
  /// - Parameters:
  ///   - kind: The kind of call (`.pwrite`).
  ///   - occurrence: Which call of that kind, 1-based.
  ///   - count: The most bytes it writes; at least 1.
  public func shorten(_ kind: SyscallKind, occurrence: Int, to count: Int) {
    state.withLock { $0.shortWrites[kind, default: [:]][occurrence] = Swift.max(1, count) }
  }

  /// The most bytes the next call of `kind` may write, when ``shorten(_:occurrence:to:)``
  /// shortened it; `nil` otherwise. Does not count the call.
  func shortWriteLength(ofNext kind: SyscallKind) -> Int? {
    state.withLock { state in
      state.shortWrites[kind]?[state.counts[kind, default: 0] + 1]
    }
  }

  /// Every call made through the seam since creation or the last ``resetCounts()``, in order,
  /// including failed and retried ones.
  public var trace: [SyscallKind] { state.withLock { $0.trace } }

  /// The faults that fired, in order.
  public var injected: [Fault] { state.withLock { $0.injected } }

  /// How many calls of `kind` were made.
  ///
  /// - Parameter kind: The kind of call.
  /// - Returns: The count since creation or the last ``resetCounts()``.
  public func count(of kind: SyscallKind) -> Int { state.withLock { $0.counts[kind, default: 0] } }

  /// For the call at `index` in ``trace``, its 1-based occurrence number among calls of its kind.
  ///
  /// - Parameter index: An index into ``trace``.
  /// - Returns: The kind at that index and its occurrence number.
  public func occurrence(at index: Int) -> (kind: SyscallKind, occurrence: Int) {
    let trace = self.trace
    let kind = trace[index]
    return (kind, trace[...index].lazy.filter { $0 == kind }.count)
  }

  /// Clears the counters, the trace and the record of injected faults; keeps the faults.
  public func resetCounts() {
    state.withLock {
      $0.counts = [:]
      $0.trace = []
      $0.injected = []
    }
  }

  /// Removes every fault; keeps the counters and the trace.
  public func removeAllFaults() { state.withLock { $0.faults = [] } }

  /// Counts one call of `kind` and returns the fault to inject into it, if any.
  func intercept(_ kind: SyscallKind) -> Fault? {
    state.withLock { state in
      let number = state.counts[kind, default: 0] + 1
      state.counts[kind] = number
      state.trace.append(kind)
      guard
        let fault = state.faults.first(where: {
          $0.kind == kind && ($0.occurrence == nil || $0.occurrence == number)
        })
      else { return nil }
      state.injected.append(fault)
      return fault
    }
  }
}
