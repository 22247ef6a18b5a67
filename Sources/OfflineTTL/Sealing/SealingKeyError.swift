/// A sealing key could not be loaded or created. A store that needs its key and cannot get it
/// refuses (the gate turns the store's error into an `expired` refusal); nothing in the store is
/// changed, and no path prompts the user or waits without a time limit.
///
/// An extensible set of stable snake_case codes (new ones may be added without breaking callers).
public struct SealingKeyError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of failure.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case missing = "key_missing"
      case wrongSize = "key_wrong_size"
      case insecureMode = "key_insecure_mode"
      case wrongOwner = "key_wrong_owner"
      case symbolicLink = "key_symbolic_link"
      case notRegularFile = "key_not_regular_file"
      case hardLinked = "key_hard_linked"
      case insideStore = "key_inside_store"
      case unavailable = "key_unavailable"
      case ambiguous = "key_ambiguous"
      case io = "key_io"
      case lockTimedOut = "key_lock_timed_out"
      case weak = "key_weak"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// No key exists yet. Only an online sign-in creates one
    /// (``SealingKeyProvider/loadOrCreateKey()``); the offline path never does.
    public static let missing = Code(.missing)
    /// The key is not exactly ``SealingKey/byteCount`` (32) bytes, for example a truncated file.
    public static let wrongSize = Code(.wrongSize)
    /// The key file is readable or writable by group or others (mode must be 0600 or stricter),
    /// or the directory that holds it may be written by group or others.
    public static let insecureMode = Code(.insecureMode)
    /// The key file, or the directory that holds it, belongs to another user than the process's
    /// effective user.
    public static let wrongOwner = Code(.wrongOwner)
    /// The key file's path names a symbolic link, which is never followed.
    public static let symbolicLink = Code(.symbolicLink)
    /// The key file's path names a directory, a FIFO, a device or a socket.
    public static let notRegularFile = Code(.notRegularFile)
    /// The key file has more than one name (a hard link, inside a store or anywhere else):
    /// each name is a copy of the key that travels with whatever holds it.
    public static let hardLinked = Code(.hardLinked)
    /// The key file lies inside the store directory it seals, where anyone who can replace the
    /// store can replace the key too.
    public static let insideStore = Code(.insideStore)
    /// The keyring holding the key cannot be used now (locked, no session bus, no provider, no
    /// answer in time): see ``SealingKeyError/unusableReason``. The key itself is intact.
    public static let unavailable = Code(.unavailable)
    /// More than one key matches (two keyring items with the same attributes); none is used.
    public static let ambiguous = Code(.ambiguous)
    /// Reading or writing the key failed; see ``SealingKeyError/errno``.
    public static let io = Code(.io)
    /// Another thread or process held the lock that serializes key creation (the key
    /// directory's `flock`, ``FileSealingKeyProvider/lockTimeout``) past its time limit; no key
    /// was read or created. A store reports it as ``StoreError/Code/lockTimedOut``.
    public static let lockTimedOut = Code(.lockTimedOut)
    /// The key's 32 bytes are all zero: a file or secret that was never filled with a key (a
    /// zeroed or preallocated file), not one that ``SealingKeyProvider/loadOrCreateKey()`` made.
    /// It is refused rather than used, since anyone can guess it.
    public static let weak = Code(.weak)

    /// The stable snake_case name, e.g. `key_wrong_size`.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// The operating system's error number, when one caused this.
  public let errno: Int32?
  /// For a key kept in an outside service, why that service could not be used.
  public let unusableReason: StoreUnusableReason?
  /// A sentence for people.
  public let reason: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - errno: The operating system's error number, if any.
  ///   - unusableReason: Why an outside service could not be used, if that is the cause.
  ///   - reason: A sentence for people.
  public init(
    code: Code, errno: Int32? = nil, unusableReason: StoreUnusableReason? = nil, reason: String
  ) {
    self.code = code
    self.errno = errno
    self.unusableReason = unusableReason
    self.reason = reason
  }

  /// `"<code>[ (<unusable reason>)]: <reason>"`.
  public var description: String {
    guard let unusableReason else { return "\(code): \(reason)" }
    return "\(code) (\(unusableReason)): \(reason)"
  }
}
