/// An ``OnlineSession`` (or ``OfflineAccessGate/beginOnlineSession()``) refused or failed.
/// When thrown, nothing of the refused operation was written.
public struct OnlineSessionError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of failure.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case closed
      case superseded
      case markStoreFailed = "mark_store_failed"
      case cacheStoreFailed = "cache_store_failed"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The session was closed (``OnlineSession/close()`` or a sign-out).
    public static let closed = Code(.closed)
    /// A newer online session (a later generation) has begun.
    public static let superseded = Code(.superseded)
    /// The mark store failed; see ``OnlineSessionError/markError``.
    public static let markStoreFailed = Code(.markStoreFailed)
    /// The item store failed; see ``OnlineSessionError/cacheError``.
    public static let cacheStoreFailed = Code(.cacheStoreFailed)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// The mark store's error, for `mark_store_failed`.
  public let markError: ClockMarkStoreError?
  /// The item store's error, for `cache_store_failed`.
  public let cacheError: CacheStoreError?
  /// A sentence for people.
  public let reason: String

  init(_ backing: Code.Backing, reason: String) {
    self.code = Code(backing)
    self.markError = nil
    self.cacheError = nil
    self.reason = reason
  }

  init(markError: ClockMarkStoreError) {
    self.code = .markStoreFailed
    self.markError = markError
    self.cacheError = nil
    self.reason = markError.description
  }

  init(cacheError: CacheStoreError) {
    self.code = .cacheStoreFailed
    self.markError = nil
    self.cacheError = cacheError
    self.reason = cacheError.description
  }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
