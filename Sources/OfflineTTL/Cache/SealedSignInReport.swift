import Synchronization

/// What a sealed sign-in left out of its new set: the keys of old items that do not
/// authenticate with the key it seals with (a store sealed for the first time, or re-sealed with
/// another key, or an item file altered or replaced) and that it does not write again. The
/// command line's `sign-in` says how many.
///
/// A sealed sign-in records into the report bound on its thread around it
/// (``collecting(_:)``); with none bound, nothing is recorded. It costs nothing more: a sealed
/// sign-in whose old index does not authenticate already opens every old item to decide which
/// it carries, and one whose old index authenticates carries every listed item.
@_spi(SignInReport)
public final class SealedSignInReport: Sendable {
  private let names = Mutex<[String]>([])

  /// An empty report.
  public init() {}

  /// The keys of the old items the last sealed sign-in run under this report left out, sorted;
  /// empty when it carried every old item, wrote it again, or was not sealed.
  public var droppedKeys: [String] { names.withLock { $0.sorted() } }

  /// Runs `body` with this report bound to the current thread (a task-local value): a sealed
  /// sign-in that `body` runs synchronously records what it left out.
  ///
  /// - Parameter body: The work, e.g. a gate's `beginOnlineSession(writing:)`.
  /// - Returns: What `body` returns.
  public func collecting<T>(_ body: () -> T) -> T {
    Self.$current.withValue(self, operation: body)
  }

  /// The report a sealed sign-in on this thread records into, if any.
  @TaskLocal static var current: SealedSignInReport?

  /// Records the keys a staging left out (replacing what an earlier staging under the same
  /// report recorded: the last one is the one committed).
  static func record(_ dropped: [String]) {
    current?.names.withLock { $0 = dropped }
  }
}
