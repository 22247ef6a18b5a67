import Foundation
@_spi(SystemCalls) import OfflineTTL

#if SecretService
  import OfflineTTLSecretService
#endif

/// Where `status`, `read`, `sign-in` and `mark` keep items and the clock mark: `--backend file`
/// (the default: ``DirectoryCacheStore`` and ``FileClockMarkStore`` in the store directory) or,
/// when the tool is built with the `SecretService` trait, `--backend secret-service` (secrets
/// in the Secret Service's `default` collection, with the store directory holding only the lock
/// file and naming the cache: application id `offline-ttl-cli:<absolute store path>`, see
/// ``applicationID(storePath:)``).
///
/// `--seal file:<path>` or `--seal secret-service` seals the file backend (see
/// ``FileSealingKeyProvider`` and `SecretServiceSealingKeyProvider`, the latter keyed by the same
/// application id as the Secret Service backend).
struct StoreBackend: Equatable {
  /// Where the sealing key lives.
  enum Seal: Equatable {
    case keyFile(String)
    case secretService
  }

  enum Kind: Equatable {
    case file
    case secretService
  }

  var kind: Kind
  /// The `--seal` choice, or `nil` for an unsealed store.
  var seal: Seal? = nil
  /// The `--lock-timeout` value: how long every store of the command waits for a lock that
  /// another thread or process holds (default: the library's, 30 seconds).
  var lockTimeout: Duration = FileClockMarkStore.defaultLockTimeout
  #if SecretService
    /// The time every keyring operation of this command shares (``keyringBudgetTotal``, made
    /// by ``parse(_:)`` for `--backend secret-service` and `--seal secret-service`), and its
    /// memory of a keyring that did not answer: asked once, not once per store. `nil`: each
    /// operation is bounded on its own.
    var keyringBudget: SecretServiceBudget? = nil
  #endif

  /// What one command may spend talking to the keyring in all: 5 seconds, the library's limit
  /// for one call, so a keyring that stopped answering costs a command about that, not that
  /// much per store it opens.
  static let keyringBudgetTotal: Duration = .seconds(5)
  /// What a sign-in adds to ``keyringBudgetTotal`` for each item it writes (one secret each:
  /// about 25 ms on a quiet machine; the margin is for a loaded one).
  static let keyringBudgetPerItem: Duration = .seconds(1)

  static let file = StoreBackend(kind: .file)
  static let secretService = StoreBackend(kind: .secretService)

  /// The `--backend` option (listed only when the Secret Service backend is built in),
  /// `--seal` and `--lock-timeout`.
  static var optionSpecs: [OptionSpec] {
    #if SecretService
      [.backend, .seal, .lockTimeout]
    #else
      [.seal, .lockTimeout]
    #endif
  }

  /// A `--lock-timeout` value, checked.
  ///
  /// - Parameter duration: The parsed duration.
  /// - Returns: It, when it is at least zero and at most an hour.
  /// - Throws: ``UsageError`` (exit 64) otherwise.
  static func lockTimeout(_ duration: Duration) throws(UsageError) -> Duration {
    guard duration >= .zero, duration <= .seconds(3600) else {
      throw UsageError(
        "--lock-timeout: must be at least 0s and at most 1h, got "
          + StoreCommandSupport.durationText(duration))
    }
    return duration
  }

  /// The `--backend` and `--seal` values; an unsealed `file` store when both are absent.
  ///
  /// - Throws: ``UsageError`` for any other value, or `--seal` with the Secret Service backend.
  static func parse(_ arguments: ParsedArguments) throws(UsageError) -> StoreBackend {
    var backend = try parseKind(arguments)
    backend.seal = try parseSeal(arguments)
    if let timeout = try arguments.duration(.lockTimeout) {
      backend.lockTimeout = try lockTimeout(timeout)
    }
    if backend.seal != nil && backend.kind != .file {
      throw UsageError("--seal: only the file backend is sealed")
    }
    backend.startKeyringBudget()
    return backend
  }

  /// Gives the command one keyring budget, when it uses the keyring: ``keyringBudgetTotal``
  /// and ``keyringBudgetPerItem`` for each of `itemsWritten`.
  ///
  /// - Parameter itemsWritten: How many items the command writes (a sign-in's `--put`s).
  mutating func startKeyringBudget(itemsWritten: Int = 0) {
    #if SecretService
      guard kind == .secretService || seal == .secretService else { return }
      let total =
        Self.keyringBudgetTotal + Self.keyringBudgetPerItem * min(max(itemsWritten, 0), 100_000)
      keyringBudget = try? SecretServiceBudget(total: total)
    #endif
  }

  /// The `--seal` value alone (`demo` has no `--backend`).
  static func parseSeal(_ arguments: ParsedArguments) throws(UsageError) -> Seal? {
    try parseSeal(arguments.value(.seal))
  }

  /// One `--seal` value, or `nil` for none.
  ///
  /// - Throws: ``UsageError`` for a value that is neither `file:<path>` (with a path that is
  ///   not empty) nor `secret-service` (or `secret-service` in a build without it).
  static func parseSeal(_ text: String?) throws(UsageError) -> Seal? {
    guard let text else { return nil }
    if text.hasPrefix("file:") {
      guard text.count > 5 else {
        throw UsageError("--seal: an empty path names no key file (file:<path>), got \"file:\"")
      }
      return .keyFile(String(text.dropFirst(5)))
    }
    if text == "secret-service" {
      #if SecretService
        return .secretService
      #else
        throw UsageError("--seal: this build has no Secret Service support")
      #endif
    }
    throw UsageError(
      "--seal: expected file:<path> or secret-service, got \(text.debugDescription)")
  }

  private static func parseKind(_ arguments: ParsedArguments) throws(UsageError) -> StoreBackend {
    #if SecretService
      return try parseKind(arguments.value(.backend))
    #else
      // This build does not declare --backend, so the reader rejected it already.
      return .file
    #endif
  }

  /// One `--backend` value; `file` for none.
  ///
  /// - Throws: ``UsageError`` for an unknown backend.
  static func parseKind(_ value: String?) throws(UsageError) -> StoreBackend {
    switch value {
    case nil, "file": return .file
    #if SecretService
      case "secret-service": return .secretService
    #endif
    case let other?:
      throw UsageError("--backend: unknown backend '\(other)' (use \(choices))")
    }
  }

  private static var choices: String {
    #if SecretService
      "file or secret-service"
    #else
      "file; this build has no Secret Service backend"
    #endif
  }

  /// The clock-mark store for a store directory.
  func marks(at path: String) throws(CommandFailure) -> any ClockMarkStore {
    switch kind {
    case .file:
      var store = FileClockMarkStore(atPath: path, sealing: try sealing(at: path))
      store.lockTimeout = lockTimeout
      return store
    case .secretService:
      #if SecretService
        return SecretServiceClockMarkStore(configuration: try keyringConfiguration(path))
      #else
        preconditionFailure("no Secret Service backend in this build")
      #endif
    }
  }

  /// The item store for a store directory.
  func cache(at path: String) throws(CommandFailure) -> any CacheItemStore {
    switch kind {
    case .file:
      var store = DirectoryCacheStore(atPath: path, sealing: try sealing(at: path))
      store.lockTimeout = lockTimeout
      return store
    case .secretService:
      #if SecretService
        return SecretServiceCacheStore(configuration: try keyringConfiguration(path))
      #else
        preconditionFailure("no Secret Service backend in this build")
      #endif
    }
  }

  /// Deletes a keyring sealing key (`--seal secret-service`) from the keyring; a key file is
  /// left alone (its path is the user's).
  ///
  /// - Parameter provider: The provider ``sealing(at:)`` made.
  /// - Returns: Whether a keyring key was deleted; `false` for a key file, no key, or a keyring
  ///   that cannot be used now.
  static func deleteKeyringKey(_ provider: any SealingKeyProvider) -> Bool {
    #if SecretService
      guard let keyring = provider as? SecretServiceSealingKeyProvider else { return false }
      return ((try? keyring.deleteKey()) ?? 0) > 0
    #else
      return false
    #endif
  }

  /// The sealing key's provider for `--seal`, or `nil`.
  func sealing(at path: String) throws(CommandFailure) -> (any SealingKeyProvider)? {
    switch seal {
    case nil: return nil
    case .keyFile(let keyPath):
      var provider = FileSealingKeyProvider(path: keyPath)
      provider.lockTimeout = lockTimeout
      return provider
    case .secretService:
      #if SecretService
        return SecretServiceSealingKeyProvider(configuration: try keyringConfiguration(path))
      #else
        preconditionFailure("no Secret Service support in this build")
      #endif
    }
  }

  #if SecretService
    private func keyringConfiguration(_ path: String) throws(CommandFailure)
      -> SecretServiceStoreConfiguration
    {
      let absolute: String
      do {
        // The store's directory with its symbolic links resolved, so that one store has one
        // id (and one key) however its path is spelt; a directory that does not exist yet
        // (nothing can be stored under it) keeps the path as written, made absolute.
        absolute = try (try? AbsolutePath.resolvingLinks(path)) ?? AbsolutePath.lexical(path)
      } catch {
        throw CommandFailure(
          .ioError, "secret-service: cannot read the working directory for \(path): \(error)")
      }
      do {
        // The configuration wants a positive limit: `0s` (never wait) tries the lock once.
        var configuration = try SecretServiceStoreConfiguration(
          applicationID: Self.applicationID(storePath: absolute), lockDirectory: absolute,
          lockTimeout: max(lockTimeout, .nanoseconds(1)))
        configuration.budget = keyringBudget
        return Self.underFormerName(configuration, path: path, resolved: absolute)
      } catch {
        throw CommandFailure(.ioError, "secret-service: \(error.reason)")
      }
    }

    /// The configuration under the store's name from before 0.4.0, when its secrets are there.
    ///
    /// Before 0.4.0 the application id was the path as given made absolute lexically (only its
    /// `.` and `..` removed): a store used through a linked directory kept its secrets under
    /// that spelling, which its real path no longer finds. When the real path's id holds no
    /// secret, and the spelling given names this very store (the lexical path resolves to the
    /// same real path: `x/../s` with `x` a link names another store, never this one), the
    /// secrets under the lexical id are this store's: the command uses that id. Nothing is
    /// created, moved or deleted to decide; a keyring that cannot be asked keeps the real id
    /// (and the command then reports it).
    ///
    /// - Complexity: Nothing for a path spelt as it resolves; otherwise two keyring searches
    ///   under the command's budget.
    private static func underFormerName(
      _ configuration: SecretServiceStoreConfiguration, path: String, resolved: String
    ) -> SecretServiceStoreConfiguration {
      guard let lexical = try? AbsolutePath.lexical(path), lexical != resolved,
        (try? AbsolutePath.resolvingLinks(lexical)) == resolved
      else { return configuration }
      var former = configuration
      former.applicationID = applicationID(storePath: lexical)
      guard (try? SecretServiceKeyring.holdsSecrets(configuration: configuration)) == false,
        (try? SecretServiceKeyring.holdsSecrets(configuration: former)) == true
      else { return configuration }
      return former
    }
  #endif

  /// The application id of the keyring store (and the `--seal secret-service` key) at an
  /// absolute store path (its directories' symbolic links resolved): `offline-ttl-cli:<path>`,
  /// or, for a path that is not valid UTF-8 (a D-Bus attribute must be),
  /// `offline-ttl-cli-bytes:<path>` with every byte outside
  /// printable ASCII, and `%`, written `%XX` (uppercase hexadecimal). The two prefixes keep the
  /// two spellings apart, so two paths never share an id.
  ///
  /// - Parameter absolute: The store's absolute path (its components may be escapes).
  /// - Returns: The id, valid UTF-8 without NUL.
  /// - Complexity: O(n) in the path's length.
  static func applicationID(storePath absolute: String) -> String {
    guard FileSystemName.holdsEscape(absolute) else { return "offline-ttl-cli:" + absolute }
    let digits = Array("0123456789ABCDEF".utf8)
    var text: [UInt8] = Array("offline-ttl-cli-bytes:".utf8)
    for byte in FileSystemName.bytes(ofPath: absolute) {
      if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") {
        text.append(byte)
      } else {
        text += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: text, as: UTF8.self)
  }
}
