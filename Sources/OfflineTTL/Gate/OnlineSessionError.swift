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
      case tpmUnavailable = "tpm_unavailable"
      case invalidServerTime = "invalid_server_time"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The session was closed (``OnlineSession/close()`` or a sign-out).
    public static let closed = Code(.closed)
    /// A newer online session (a later generation) has begun.
    public static let superseded = Code(.superseded)
    /// The mark store failed; see ``OnlineSessionError/storeError``.
    public static let markStoreFailed = Code(.markStoreFailed)
    /// The item store failed; see ``OnlineSessionError/storeError``.
    public static let cacheStoreFailed = Code(.cacheStoreFailed)
    /// The gate's TPM clock could not be read at sign-in; nothing was written.
    public static let tpmUnavailable = Code(.tpmUnavailable)
    /// The server time's uncertainty is negative; nothing was written.
    public static let invalidServerTime = Code(.invalidServerTime)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// The store's error as the store threw it, for `mark_store_failed` and `cache_store_failed`
  /// (the code says which store).
  public let storeError: StoreError?
  /// A sentence for people.
  public let reason: String

  init(_ backing: Code.Backing, reason: String) {
    self.code = Code(backing)
    self.storeError = nil
    self.reason = reason
  }

  init(markError: StoreError) {
    self.code = .markStoreFailed
    self.storeError = markError
    self.reason = markError.description
  }

  init(cacheError: StoreError) {
    self.code = .cacheStoreFailed
    self.storeError = cacheError
    self.reason = cacheError.description
  }

  /// ``storeError`` when the mark store failed (`mark_store_failed`), else `nil`.
  public var markError: StoreError? { code == .markStoreFailed ? storeError : nil }
  /// ``storeError`` when the item store failed (`cache_store_failed`), else `nil`.
  public var cacheError: StoreError? { code == .cacheStoreFailed ? storeError : nil }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
