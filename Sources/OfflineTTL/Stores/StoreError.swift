/// A store failed: the one error type of every ``ClockMarkStore`` and every ``CacheItemStore``.
///
/// The gate fails closed (<doc:Rules#Fail-closed>): it turns each of these into an `expired`
/// refusal that carries it, and no store deletes or rewrites evidence on any failure. The gate's
/// own errors (``OnlineSessionError``, ``OfflineReadError``) carry the store's error as it was
/// thrown instead of re-coding it.
///
/// The shape of an error that can grow: ``code`` is a struct backed by a private enum, so adding
/// a code is not a breaking change (a public enum would break every exhaustive `switch` of a
/// client). Match on codes with `==` or pattern matching:
///
/// ```swift
/// do {
///   try marks.observe(now: now)
/// } catch where error.code == .unreadable {
///   print(error.unreadableReason!)   // bad_checksum, symbolic_link, ...
/// } catch {
///   print(error)                     // "write_failed: cannot write clock-mark in ...: EIO (...)"
/// }
/// ```
///
/// Equality and hashing use ``code`` and the structured detail (``unreadableReason``,
/// ``unusableReason``, ``key``, ``errno``), never the ``message`` text, which is for people and may
/// change between releases.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of failure: a stable snake_case name.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case absent
      case unreadable
      case itemUnreadable = "item_unreadable"
      case indexUnreadable = "index_unreadable"
      case writeFailed = "write_failed"
      case lockFailed = "lock_failed"
      case lockTimedOut = "lock_timed_out"
      case storeUnusable = "store_unusable"
      case storeFromAnotherMachine = "store_from_another_machine"
      case machineIDUnreadable = "machine_id_unreadable"
      case insecureStore = "insecure_store"
      case notARegularFile = "not_a_regular_file"
      case itemUnauthentic = "item_unauthentic"
      case indexUnauthentic = "index_unauthentic"
      case markUnauthentic = "mark_unauthentic"
      case sealMismatch = "seal_mismatch"
      case keyRequired = "key_required"
      case keyUnavailable = "key_unavailable"
      case clockUnreadable = "clock_unreadable"
      case storesSealedDifferently = "stores_sealed_differently"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// No clock mark record exists (a mark store).
    public static let absent = Code(.absent)
    /// A clock mark record exists but cannot be trusted; see ``StoreError/unreadableReason``.
    /// Its bytes are left alone until an online sign-in replaces them.
    public static let unreadable = Code(.unreadable)
    /// A cache item exists but cannot be read or fails its checksum; see ``StoreError/key``.
    public static let itemUnreadable = Code(.itemUnreadable)
    /// The item index cannot be read and cannot be rebuilt (a read-only directory holding a
    /// corrupt index is still rebuilt in memory; this code means even that failed).
    public static let indexUnreadable = Code(.indexUnreadable)
    /// Writing or syncing failed; the previous record and every committed item are intact. See
    /// ``StoreError/errno``.
    public static let writeFailed = Code(.writeFailed)
    /// The cross-process lock could not be taken.
    public static let lockFailed = Code(.lockFailed)
    /// Another thread or process held the store's cross-process lock past the store's time limit
    /// (`lockTimeout` of ``FileClockMarkStore``, ``DirectoryCacheStore`` and
    /// ``FileSealingKeyProvider``, 30 seconds by default): a holder stopped with `SIGSTOP`, hung,
    /// or holding the lock on purpose. This call read, wrote and deleted nothing under the lock;
    /// the gate refuses (`expired`, carrying this error) instead of waiting forever. Trying again
    /// later is safe. The command-line tool sets the limit with `--lock-timeout`.
    public static let lockTimedOut = Code(.lockTimedOut)
    /// The store itself (its directory, its service) cannot be opened or created; see
    /// ``StoreError/errno`` or ``StoreError/unusableReason``.
    public static let storeUnusable = Code(.storeUnusable)
    /// The clock mark record was written on another machine (a copied store, a network home
    /// directory); its boot-clock evidence does not apply here. Refused until an online sign-in
    /// rebinds the record to this machine.
    public static let storeFromAnotherMachine = Code(.storeFromAnotherMachine)
    /// This machine's id is there but cannot be read (`EMFILE`, `ENFILE`, `ENOMEM`, `EIO`,
    /// `EACCES`...; see ``StoreError/errno``), so a record bound to a machine cannot be judged
    /// here and an online sign-in cannot bind one. Not evidence of another machine: nothing is
    /// written, and trying again once the cause is gone is safe.
    public static let machineIDUnreadable = Code(.machineIDUnreadable)
    /// A directory or file of the store (the store directory, `cache/`, an item, the index, the
    /// clock mark record or a lock file) is owned by another user, or group or others may write
    /// it: nothing in it is trusted. The message names the path. Nothing is changed; the user
    /// recovers by removing the write access (`chmod go-w`) after checking the contents, or by
    /// removing the store and signing in online again. The command-line tool exits 74.
    public static let insecureStore = Code(.insecureStore)
    /// A FIFO, socket, device, directory or symbolic link stands where a file of a cache store
    /// belongs (``StoreError/key`` names the item when it is one). It is never waited on or
    /// followed; an online sign-in removes it.
    public static let notARegularFile = Code(.notARegularFile)
    /// A sealed store's item failed authentication: altered, moved from another key, copied from
    /// an older generation or from another store (see ``StoreError/key``). Left in place.
    public static let itemUnauthentic = Code(.itemUnauthentic)
    /// A sealed store's index failed authentication (altered, or from another generation or
    /// store). Left in place, never rebuilt offline; an online sign-in re-seals it.
    public static let indexUnauthentic = Code(.indexUnauthentic)
    /// A slot of a sealed store's clock mark record failed authentication. Left in place until
    /// an online sign-in rewrites it.
    public static let markUnauthentic = Code(.markUnauthentic)
    /// The store's files are not sealed, or sealed with another key, while the caller expects its
    /// seal. Refused until an online sign-in re-seals the store.
    public static let sealMismatch = Code(.sealMismatch)
    /// The store is sealed and was opened without a sealing key.
    public static let keyRequired = Code(.keyRequired)
    /// The sealing key cannot be had (missing, unsafe file, locked keyring...); the message
    /// starts with the key's own error code, and ``StoreError/unusableReason`` says why a
    /// keyring could not be used.
    public static let keyUnavailable = Code(.keyUnavailable)
    /// A clock that an online sign-in's reset must record (a configured TPM) could not be read
    /// under the lock; nothing was written, and the previous record is intact.
    public static let clockUnreadable = Code(.clockUnreadable)
    /// A gate was given an item store and a clock-mark store that are sealed differently (one
    /// sealed and the other not, or providers of two different keys, as
    /// ``SealingKeyProvider/keyIdentity()`` says): a sealed item index is bound to a mark record
    /// sealed with the same key, so no sign-in could make such a pair agree. Every operation of
    /// that gate refuses with this code before it reads or writes anything
    /// (``OfflineAccessGate/sealingConflict``); give both stores the same provider, or neither.
    /// A configuration error, not damage: nothing in the store is wrong.
    public static let storesSealedDifferently = Code(.storesSealedDifferently)

    /// The stable snake_case name, e.g. `write_failed`.
    public var description: String { backing.rawValue }
  }

  /// The kind of failure.
  public let code: Code
  /// For ``Code/unreadable``, why the record cannot be trusted.
  public let unreadableReason: UnreadableReason?
  /// For a store kept in an outside service (the Secret Service, the Keychain), why that service
  /// could not be used; usually with ``Code/storeUnusable``, or ``Code/writeFailed`` when a write
  /// failed or timed out.
  public let unusableReason: StoreUnusableReason?
  /// For ``Code/keyUnavailable`` (and ``Code/lockTimedOut`` while a key was being made), which
  /// problem the sealing key has: `key_missing`, `key_wrong_size`, `key_insecure_mode`,
  /// `key_wrong_owner`, … (``SealingKeyError/code``), so that a program can tell them apart
  /// without reading ``message``. `nil` for every other error.
  public let keyProblem: SealingKeyError.Code?
  /// The cache item concerned, when one is (``Code/itemUnreadable``, a failed item write).
  public let key: CacheItemKey?
  /// The operating system's error number, when one caused this (`ENOSPC`, `EIO`, `EROFS`, ...).
  public let errno: Int32?
  /// A sentence for people; not part of equality, and not stable across releases.
  public let message: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - unreadableReason: For ``Code/unreadable``, why.
  ///   - key: The cache item concerned, if any.
  ///   - errno: The operating system's error number, if any.
  ///   - unusableReason: Why an outside service could not be used, if that is the cause.
  ///   - keyProblem: For a sealing key that cannot be had, its ``SealingKeyError/code``.
  ///   - message: A sentence for people.
  public init(
    code: Code, unreadableReason: UnreadableReason? = nil, key: CacheItemKey? = nil,
    errno: Int32? = nil, unusableReason: StoreUnusableReason? = nil,
    keyProblem: SealingKeyError.Code? = nil, message: String
  ) {
    self.code = code
    self.unreadableReason = unreadableReason
    self.unusableReason = unusableReason
    self.keyProblem = keyProblem
    self.key = key
    self.errno = errno
    self.message = message
  }

  /// `"<code>[ (<why>)]: <message>"`, e.g. `unreadable (bad_checksum): ...` or
  /// `store_unusable (collection_locked): ...`.
  public var description: String {
    var text = code.description
    if let unreadableReason { text += " (\(unreadableReason))" }
    if let unusableReason { text += " (\(unusableReason))" }
    return text + ": " + message
  }

  /// Equal when the code and the structured detail are; the message is not compared.
  public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
    lhs.code == rhs.code && lhs.unreadableReason == rhs.unreadableReason
      && lhs.unusableReason == rhs.unusableReason && lhs.key == rhs.key && lhs.errno == rhs.errno
      && lhs.keyProblem == rhs.keyProblem
  }

  /// Hashes the code and the structured detail, not the message.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(code)
    hasher.combine(unreadableReason)
    hasher.combine(unusableReason)
    hasher.combine(key)
    hasher.combine(errno)
    hasher.combine(keyProblem)
  }
}
