#if SecretService
  import CLibSecret
  import OfflineTTL
  import Synchronization

  /// One time limit shared by every Secret Service operation of a unit of work (a command, one
  /// decision of a gate, a sign-in), and its memory of a keyring that did not answer.
  ///
  /// Without a budget, each operation is bounded on its own (by
  /// ``SecretServiceStoreConfiguration/timeout`` of silence), and a unit of work that runs
  /// several operations against a keyring that stopped answering waits that long for each: a
  /// command's five operations took 40–50 s against a stopped daemon. Give every store of the
  /// unit the same budget (``SecretServiceStoreConfiguration/budget``) and:
  /// - the operations together spend at most ``total`` talking to the keyring: each may use what
  ///   the ones before it left (measured from its connection to its last answer on the real
  ///   monotonic clock; waiting for a lock file is not counted), and one that reaches the end is
  ///   cancelled with `timed_out`;
  /// - once an operation timed out (the budget spent, or a call unanswered for a whole
  ///   `timeout`), every later operation under the budget fails at once with `timed_out`,
  ///   saying so, and never asks the keyring again.
  ///
  /// A keyring that stopped answering thus costs one `timeout` per unit of work (or ``total``,
  /// whichever is shorter), not one per operation. Operations that run at the same time each
  /// start from what remained when they started (the budget bounds each of them, not their sum).
  /// Make a new budget for each unit of work: a spent one refuses everything.
  public final class SecretServiceBudget: Sendable, Hashable, CustomStringConvertible {
    /// The time all operations under this budget may spend together.
    public let total: Duration

    private struct State {
      var spentNanoseconds: Int64 = 0
      var timedOut: String?
    }

    private let state = Mutex(State())
    private let totalNanoseconds: Int64

    /// Creates a budget.
    ///
    /// - Parameter total: The time every operation under it may spend together; positive.
    /// - Throws: `InvalidValueError` (`invalid_duration`) when `total` is not positive.
    public init(total: Duration) throws(InvalidValueError) {
      guard total > .zero else {
        throw InvalidValueError(
          code: .invalidDuration, reason: "a Secret Service budget must be positive")
      }
      self.total = total
      totalNanoseconds = max(total.exactNanoseconds ?? .max, 1)
    }

    /// What is left for the next operation (zero once an operation timed out).
    public var remaining: Duration {
      state.withLock { state in
        state.timedOut != nil
          ? .zero : .nanoseconds(max(totalNanoseconds - state.spentNanoseconds, 0))
      }
    }

    /// Whether an operation under this budget timed out: later ones are refused at once.
    public var hasTimedOut: Bool { state.withLock { $0.timedOut != nil } }

    /// E.g. `Secret Service budget 5.0 seconds (1.2 seconds left)`.
    public var description: String { "Secret Service budget \(total) (\(remaining) left)" }

    /// Budgets are equal when they are the same object (operations share one by reference).
    public static func == (lhs: SecretServiceBudget, rhs: SecretServiceBudget) -> Bool {
      lhs === rhs
    }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// What an operation starting now may spend, in nanoseconds (positive).
    ///
    /// - Throws: `SecretServiceFault` `timed_out` when an operation timed out before (no call
    ///   is made) or nothing is left (remembered as a time-out).
    func begin() throws(SecretServiceFault) -> Int64 {
      let outcome = state.withLock { state -> Result<Int64, SecretServiceFault> in
        if let earlier = state.timedOut {
          return .failure(
            SecretServiceFault(
              reason: .timedOut, duringWrite: false,
              message: "the keyring did not answer earlier under this budget (\(earlier));"
                + " it was not asked again"))
        }
        let left = totalNanoseconds - state.spentNanoseconds
        guard left > 0 else {
          let message = "the Secret Service budget of \(total) is spent"
          state.timedOut = message
          return .failure(
            SecretServiceFault(
              reason: .timedOut, duringWrite: false, message: message + "; nothing was asked"))
        }
        return .success(left)
      }
      return try outcome.get()
    }

    /// Charges an operation's time, and remembers its time-out.
    ///
    /// - Parameters:
    ///   - spentNanoseconds: How long the operation talked to the keyring.
    ///   - timedOut: The time-out's message, or `nil` when it did not time out.
    func end(spentNanoseconds: Int64, timedOut: String?) {
      state.withLock { state in
        let (sum, overflow) = state.spentNanoseconds.addingReportingOverflow(
          max(spentNanoseconds, 0))
        state.spentNanoseconds = overflow ? .max : sum
        if state.timedOut == nil, let timedOut { state.timedOut = timedOut }
      }
    }
  }
#endif
