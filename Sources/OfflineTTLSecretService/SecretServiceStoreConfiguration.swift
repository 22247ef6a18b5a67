#if SecretService
  import Foundation
  @_spi(SystemCalls) import OfflineTTL

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// Where and how the Secret Service stores keep their secrets.
  ///
  /// Items and the clock mark are secrets in the provider's `default` collection (creating a
  /// collection needs an interactive prompt), found by the attributes `application` (this
  /// ``applicationID``), `kind` (`clock-mark` or `item`) and `key`. Every process that uses the
  /// same application id must name the same ``lockDirectory``: the read → advance → write of the
  /// mark and every commit of items are serialized with `flock`ed files there (the Secret Service
  /// has no transactions): `secret-service.<application id>.marks.lock` for the mark and
  /// `….items.lock` for the items, two separate lock files; a
  /// ``SecretServiceSealingKeyProvider`` creates its key under `….sealing-key.lock`. The lock
  /// directory may be a file store's own directory (the command-line tool uses the store
  /// directory): a new file store may be made beside them.
  public struct SecretServiceStoreConfiguration: Sendable, Hashable {
    /// The `application` attribute of every secret: one cache per application id.
    public var applicationID: String
    /// The directory of the lock files (created 0700 when missing; its parent must exist).
    /// Defaults to `$XDG_RUNTIME_DIR/offline-ttl`. A directory whose path is not valid UTF-8
    /// (given as a URL, or from `XDG_RUNTIME_DIR`) is held with each such component as the
    /// package's escape of its bytes (NUL, then the bytes in lowercase hexadecimal), which the
    /// stores turn back into the same bytes when they open it.
    public var lockDirectory: String
    /// Whether a locked collection may be unlocked through the provider's interactive prompt.
    /// Off by default: a library call never shows a prompt unless its caller opts in; a locked
    /// collection is then a `collection_locked` failure.
    public var allowsUnlockPrompt: Bool
    /// How long the service may leave a call unanswered.
    /// When a limit passes with no call answered, the pending call is cancelled through its
    /// `GCancellable` and the operation fails with `timed_out` (a call is thus cancelled between
    /// one and two limits after the previous answer). Waited by a watchdog thread in `poll(2)`
    /// with relative timeouts, so it also works under libfaketime (where Dispatch and
    /// `Task.sleep` timers never fire). It bounds each operation on its own: to bound several
    /// operations together, and ask a keyring that timed out only once, set ``budget``.
    public var timeout: Duration
    /// How long to wait for a lock file while other threads or processes hold it; past it the
    /// operation fails with `lock_timed_out` (the gate refuses with it; nothing is read or
    /// written). Waited in short sleeps, bounded under libfaketime too.
    public var lockTimeout: Duration
    /// The time limit that every operation of the stores made with this configuration shares,
    /// and the memory of a keyring that timed out (see ``SecretServiceBudget``), or `nil`
    /// (the default): each operation is then bounded on its own by ``timeout``. Give one budget
    /// to the stores of one unit of work (the command-line tool makes one per command).
    public var budget: SecretServiceBudget?

    /// The default lock directory, `$XDG_RUNTIME_DIR/offline-ttl`, or `nil` when
    /// `XDG_RUNTIME_DIR` is unset or empty.
    public static var defaultLockDirectory: String? {
      guard let runtime = getenv("XDG_RUNTIME_DIR"), runtime.pointee != 0 else { return nil }
      // Its bytes, not a lossy decoding: a component that is not UTF-8 stays itself.
      let bytes = Array(UnsafeRawBufferPointer(start: runtime, count: strlen(runtime)))
      return FileSystemName.path(fromBytes: bytes) + "/offline-ttl"
    }

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - applicationID: The `application` attribute, for example a reverse-DNS name. Must not
    ///     be empty or hold NUL (libsecret takes C strings: `a\0b` would be `a`, another id).
    ///   - lockDirectory: The lock file's directory; `nil` uses ``defaultLockDirectory``.
    ///   - allowsUnlockPrompt: Whether an interactive unlock prompt may be shown (default: no).
    ///   - timeout: How long one call may go unanswered; default 5 seconds. With a prompt
    ///     allowed, give the user time to answer.
    ///   - lockTimeout: How long to wait for the lock file; default 30 seconds.
    /// - Throws: `InvalidValueError` when the application id is empty or holds NUL, when no lock
    ///   directory is named and `XDG_RUNTIME_DIR` is unset, or when a timeout is not positive.
    public init(
      applicationID: String, lockDirectory: String? = nil, allowsUnlockPrompt: Bool = false,
      timeout: Duration = .seconds(5), lockTimeout: Duration = .seconds(30)
    ) throws(InvalidValueError) {
      guard !applicationID.isEmpty else {
        throw InvalidValueError(
          code: .invalidOption, reason: "the application id must not be empty")
      }
      guard !applicationID.utf8.contains(0) else {
        throw InvalidValueError(
          code: .invalidOption,
          reason: "the application id must not hold NUL (the keyring would see only its start)")
      }
      guard let directory = lockDirectory ?? Self.defaultLockDirectory, !directory.isEmpty else {
        throw InvalidValueError(
          code: .invalidOption, reason: "no lock directory given and XDG_RUNTIME_DIR is unset")
      }
      guard timeout > .zero, lockTimeout > .zero else {
        throw InvalidValueError(code: .invalidDuration, reason: "the timeouts must be positive")
      }
      self.applicationID = applicationID
      self.lockDirectory = directory
      self.allowsUnlockPrompt = allowsUnlockPrompt
      self.timeout = timeout
      self.lockTimeout = lockTimeout
    }

    /// Creates a configuration whose lock directory is given as a file URL (the same family as
    /// the file stores' `init(at:)` and `init(atPath:)`).
    ///
    /// - Parameters:
    ///   - applicationID: The `application` attribute. Must not be empty or hold NUL.
    ///   - lockDirectory: The lock file's directory, a `file:` URL. Its percent-encoded path is
    ///     taken byte for byte (`file:///run/l%FF` is the directory named `l` and the byte
    ///     0xFF; see ``lockDirectory``).
    ///   - allowsUnlockPrompt: Whether an interactive unlock prompt may be shown (default: no).
    ///   - timeout: How long one call may go unanswered; default 5 seconds.
    ///   - lockTimeout: How long to wait for the lock file; default 30 seconds.
    /// - Throws: `InvalidValueError` as the initializer that takes the directory's path.
    public init(
      applicationID: String, lockDirectory: URL, allowsUnlockPrompt: Bool = false,
      timeout: Duration = .seconds(5), lockTimeout: Duration = .seconds(30)
    ) throws(InvalidValueError) {
      try self.init(
        applicationID: applicationID, lockDirectory: Self.path(of: lockDirectory),
        allowsUnlockPrompt: allowsUnlockPrompt, timeout: timeout, lockTimeout: lockTimeout)
    }

    /// A file URL's path with its percent escapes decoded to bytes (`URL.path` decodes bytes
    /// that are not UTF-8 to nothing or to U+FFFD), without a trailing `/`.
    static func path(of url: URL) -> String {
      var bytes: [UInt8] = []
      var encoded = Array(url.path(percentEncoded: true).utf8)[...]
      while let byte = encoded.popFirst() {
        if byte == UInt8(ascii: "%"), encoded.count >= 2,
          let high = hexValue(encoded[encoded.startIndex]),
          let low = hexValue(encoded[encoded.startIndex + 1])
        {
          bytes.append(high << 4 | low)
          encoded = encoded.dropFirst(2)
        } else {
          bytes.append(byte)
        }
      }
      if bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
      return FileSystemName.path(fromBytes: bytes)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
      switch digit {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
      default: nil
      }
    }

    /// The lock file shared by every process using this application id for one kind of secret
    /// (`marks`, `items` or `sealing-key`: separate files, so that an online sign-in can reset
    /// the mark while it holds the items' lock, as the gate does), named by
    /// `KeyringLockFileName`: the id with every character outside `[A-Za-z0-9._-]` replaced by
    /// `_` (a collision only serializes more).
    func lockFilePath(for kind: String) -> String {
      lockDirectory + "/" + KeyringLockFileName.name(applicationID: applicationID, kind: kind)
    }
  }
#endif
