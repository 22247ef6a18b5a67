/// A cache item store failed. The gate turns every one of these into an `expired` refusal with
/// reason `item_unreadable` that carries the error; nothing is deleted on any failure.
public struct CacheStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of failure.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case itemUnreadable = "item_unreadable"
      case indexUnreadable = "index_unreadable"
      case writeFailed = "write_failed"
      case lockFailed = "lock_failed"
      case storeUnusable = "store_unusable"
      case insecureStore = "insecure_store"
      case notARegularFile = "not_a_regular_file"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// An item exists but cannot be read or fails its checksum; see ``CacheStoreError/key``.
    public static let itemUnreadable = Code(.itemUnreadable)
    /// The item index cannot be read and cannot be rebuilt (for example a read-only directory
    /// holding a corrupt index is still rebuilt in memory; this code means even that failed).
    public static let indexUnreadable = Code(.indexUnreadable)
    /// Writing or syncing failed; items already committed are intact. See ``errno``.
    public static let writeFailed = Code(.writeFailed)
    /// The cross-process writer lock could not be taken.
    public static let lockFailed = Code(.lockFailed)
    /// The store directory cannot be opened or created.
    public static let storeUnusable = Code(.storeUnusable)

    /// A directory or file of the store is owned by another user, or group or others may write
    /// it: the store is not trusted. The reason names the path. Nothing is changed; the user
    /// recovers by removing the write access (`chmod go-w`) after checking the contents, or by
    /// removing the store and signing in online again.
    public static let insecureStore = Code(.insecureStore)
    /// A FIFO, socket, device, directory or symbolic link stands where a file of the store
    /// belongs (``CacheStoreError/key`` names the item when it is one). It is never waited on
    /// or followed; an online sign-in removes it.
    public static let notARegularFile = Code(.notARegularFile)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// The item concerned, when one is.
  public let key: CacheItemKey?
  /// The operating system's error number, when one caused this.
  public let errno: Int32?
  /// For a store kept in an outside service (the Secret Service, the Keychain), why that service
  /// could not be used; usually with code `storeUnusable`, or `writeFailed` when a write failed.
  public let unusableReason: StoreUnusableReason?
  /// A sentence for people.
  public let reason: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - key: The item concerned, if any.
  ///   - errno: The operating system's error number, if any.
  ///   - unusableReason: Why an outside service could not be used, if that is the cause.
  ///   - reason: A sentence for people.
  public init(
    code: Code, key: CacheItemKey? = nil, errno: Int32? = nil,
    unusableReason: StoreUnusableReason? = nil, reason: String
  ) {
    self.code = code
    self.key = key
    self.errno = errno
    self.unusableReason = unusableReason
    self.reason = reason
  }

  /// `"<code>[ (<unusable reason>)]: <reason>"`, e.g. `store_unusable (collection_locked): …`.
  public var description: String {
    guard let unusableReason else { return "\(code): \(reason)" }
    return "\(code) (\(unusableReason)): \(reason)"
  }
}
