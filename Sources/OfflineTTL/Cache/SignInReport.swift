import Synchronization

/// What a sign-in left out of its new set: every old item it does not write again and does not
/// carry, because a read would refuse it. The command line's `sign-in` names them.
///
/// Two kinds, told apart by ``Dropped/unauthenticatedByKey``: the old items a sealed sign-in's
/// key cannot authenticate because the old set as a whole does not (a store sealed for the first
/// time, or re-sealed with another key), and the items a read of this store would refuse one by
/// one (a payload failing its CRC-32 or its AEAD tags, a file cut short or larger than its
/// header says, one the user cannot open, a FIFO, directory or link in its place, another user's
/// file, a copy from another generation or store). Both are removed by the sign-in.
///
/// A sign-in records into the report bound on its thread around it (``collecting(_:)``); with
/// none bound, nothing is recorded. Recording costs nothing more: the sign-in judges every item
/// it carries anyway.
@_spi(SignInReport)
public final class SignInReport: Sendable {
  /// One old item a sign-in left out, and why.
  public struct Dropped: Sendable, Hashable {
    /// The item's key.
    public let key: String
    /// The code a read refuses the item with: `item_unreadable`, `item_unauthentic`,
    /// `not_a_regular_file`, `insecure_store` or `seal_mismatch`.
    public let code: StoreError.Code
    /// Why, in a sentence for people (not stable across releases).
    public let reason: String
    /// Whether it was left out because the sign-in's sealing key cannot authenticate the old
    /// set at all (sealed for the first time, or re-sealed with another key), rather than
    /// because this one item is damaged.
    public let unauthenticatedByKey: Bool

    init(key: String, code: StoreError.Code, reason: String, unauthenticatedByKey: Bool = false) {
      self.key = key
      self.code = code
      self.reason = reason
      self.unauthenticatedByKey = unauthenticatedByKey
    }

    /// The item a read refused with `error`, its message without the read's "left alone" (or
    /// its advice for a hard-linked item, which this sign-in has just followed).
    init(key: String, refusal error: StoreError) {
      var reason = error.message
      if reason.hasSuffix("; left alone") { reason.removeLast("; left alone".count) }
      if reason.hasSuffix(StoreFileError.itemHardLinkAdvice) {
        reason.removeLast(StoreFileError.itemHardLinkAdvice.count)
      }
      self.init(key: key, code: error.code, reason: reason)
    }
  }

  private let items = Mutex<[Dropped]>([])

  /// An empty report.
  public init() {}

  /// The old items the last sign-in run under this report left out, sorted by key; empty when
  /// it carried every old item or wrote it again.
  public var dropped: [Dropped] { items.withLock { $0.sorted { $0.key < $1.key } } }

  /// The keys of ``dropped``, sorted.
  public var droppedKeys: [String] { dropped.map(\.key) }

  /// Runs `body` with this report bound to the current thread (a task-local value): a sign-in
  /// that `body` runs synchronously records what it left out.
  ///
  /// - Parameter body: The work, e.g. a gate's `beginOnlineSession(writing:)`.
  /// - Returns: What `body` returns.
  public func collecting<T>(_ body: () -> T) -> T {
    Self.$current.withValue(self, operation: body)
  }

  /// The report a sign-in on this thread records into, if any.
  @TaskLocal static var current: SignInReport?

  /// Records what a staging left out (replacing what an earlier staging under the same report
  /// recorded: the last one is the one committed).
  static func record(_ dropped: [Dropped]) {
    current?.items.withLock { $0 = dropped }
  }
}
