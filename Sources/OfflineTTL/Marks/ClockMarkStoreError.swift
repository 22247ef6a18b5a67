/// A clock-mark store failed. The gate turns every one of these into an `expired` refusal that
/// carries the error (DESIGN rule 5); nothing is deleted on any failure.
public struct ClockMarkStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of failure.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case absent, unreadable
      case writeFailed = "write_failed"
      case lockFailed = "lock_failed"
      case storeUnusable = "store_unusable"
      case insecureStore = "insecure_store"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// No record exists.
    public static let absent = Code(.absent)
    /// A record exists but cannot be trusted; see ``ClockMarkStoreError/unreadableReason``.
    public static let unreadable = Code(.unreadable)
    /// Writing or syncing the new record failed; the old record is intact. See ``errno``.
    public static let writeFailed = Code(.writeFailed)
    /// The cross-process lock could not be taken.
    public static let lockFailed = Code(.lockFailed)
    /// The store itself (its directory, its service) cannot be opened or created.
    public static let storeUnusable = Code(.storeUnusable)
    /// The store directory, the lock file or the record is owned by another user, or group or
    /// others may write it: nothing in it is trusted. The reason names the path.
    public static let insecureStore = Code(.insecureStore)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// Why a record is unreadable.
  public struct UnreadableReason: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case empty, truncated, oversized
      case badChecksum = "bad_checksum"
      case unknownVersion = "unknown_version"
      case permission
      case notRegularFile = "not_regular_file"
      case symbolicLink = "symbolic_link"
      case insecureMode = "insecure_mode"
      case io
      case malformed
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The file has 0 bytes.
    public static let empty = UnreadableReason(.empty)
    /// The file is shorter than the format requires.
    public static let truncated = UnreadableReason(.truncated)
    /// The file is larger than the format allows (it is not read whole).
    public static let oversized = UnreadableReason(.oversized)
    /// No copy of the record passes its checksum.
    public static let badChecksum = UnreadableReason(.badChecksum)
    /// The record is of a format version this library does not know.
    public static let unknownVersion = UnreadableReason(.unknownVersion)
    /// The operating system refused access (`EACCES`, `EPERM`).
    public static let permission = UnreadableReason(.permission)
    /// A directory, device or other non-regular file stands where the record should be.
    public static let notRegularFile = UnreadableReason(.notRegularFile)
    /// A symbolic link stands where the record should be; it is never followed.
    public static let symbolicLink = UnreadableReason(.symbolicLink)
    /// The file is readable or writable by others than its owner.
    public static let insecureMode = UnreadableReason(.insecureMode)
    /// Reading failed with an I/O error (see ``ClockMarkStoreError/errno``).
    public static let io = UnreadableReason(.io)
    /// The stored value is not a record at all (for a non-file backend).
    public static let malformed = UnreadableReason(.malformed)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// For `unreadable`, why.
  public let unreadableReason: UnreadableReason?
  /// The operating system's error number, when one caused this (ENOSPC, EIO, EROFS, …).
  public let errno: Int32?
  /// For a store kept in an outside service (the Secret Service, the Keychain), why that service
  /// could not be used; usually with code `storeUnusable`, or `writeFailed` when a write timed out.
  public let unusableReason: StoreUnusableReason?
  /// A sentence for people.
  public let reason: String

  /// Creates an error.
  public init(
    code: Code, unreadableReason: UnreadableReason? = nil, errno: Int32? = nil,
    unusableReason: StoreUnusableReason? = nil, reason: String
  ) {
    self.code = code
    self.unreadableReason = unreadableReason
    self.errno = errno
    self.unusableReason = unusableReason
    self.reason = reason
  }

  /// `"<code>[ (<why>)]: <reason>"`, e.g. `unreadable (bad_checksum): …` or
  /// `store_unusable (collection_locked): …`.
  public var description: String {
    var text = code.description
    if let unreadableReason { text += " (\(unreadableReason))" }
    if let unusableReason { text += " (\(unusableReason))" }
    return text + ": " + reason
  }
}
