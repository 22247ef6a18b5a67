import Foundation
import OfflineTTL

#if SecretService
  import OfflineTTLSecretService
#endif

/// Where `status`, `read`, `sign-in` and `mark` keep items and the clock mark: `--backend file`
/// (the default: ``DirectoryCacheStore`` and ``FileClockMarkStore`` in the store directory) or,
/// when the tool is built with the `SecretService` trait, `--backend secret-service` (secrets
/// in the Secret Service's `default` collection, with the store directory holding only the lock
/// file and naming the cache: application id `offline-ttl-cli:<absolute store path>`).
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

  static let file = StoreBackend(kind: .file)
  static let secretService = StoreBackend(kind: .secretService)

  /// The `--backend` option (listed only when the Secret Service backend is built in) and
  /// `--seal`.
  static var optionSpecs: [OptionSpec] {
    #if SecretService
      [.backend, .seal]
    #else
      [.seal]
    #endif
  }

  /// The `--backend` and `--seal` values; an unsealed `file` store when both are absent.
  ///
  /// - Throws: ``UsageError`` for any other value, or `--seal` with the Secret Service backend.
  static func parse(_ arguments: ParsedArguments) throws(UsageError) -> StoreBackend {
    var backend = try parseKind(arguments)
    backend.seal = try parseSeal(arguments)
    if backend.seal != nil && backend.kind != .file {
      throw UsageError("--seal: only the file backend is sealed")
    }
    return backend
  }

  /// The `--seal` value alone (`demo` has no `--backend`).
  static func parseSeal(_ arguments: ParsedArguments) throws(UsageError) -> Seal? {
    try parseSeal(arguments.value(.seal))
  }

  /// One `--seal` value, or `nil` for none.
  ///
  /// - Throws: ``UsageError`` for a value that is neither `file:<path>` nor `secret-service`
  ///   (or `secret-service` in a build without it).
  static func parseSeal(_ text: String?) throws(UsageError) -> Seal? {
    guard let text else { return nil }
    if text.hasPrefix("file:"), text.count > 5 { return .keyFile(String(text.dropFirst(5))) }
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
    case .file: return FileClockMarkStore(atPath: path, sealing: try sealing(at: path))
    case .secretService:
      #if SecretService
        return SecretServiceClockMarkStore(configuration: try Self.configuration(path))
      #else
        preconditionFailure("no Secret Service backend in this build")
      #endif
    }
  }

  /// The item store for a store directory.
  func cache(at path: String) throws(CommandFailure) -> any CacheItemStore {
    switch kind {
    case .file: return DirectoryCacheStore(atPath: path, sealing: try sealing(at: path))
    case .secretService:
      #if SecretService
        return SecretServiceCacheStore(configuration: try Self.configuration(path))
      #else
        preconditionFailure("no Secret Service backend in this build")
      #endif
    }
  }

  /// The sealing key's provider for `--seal`, or `nil`.
  func sealing(at path: String) throws(CommandFailure) -> (any SealingKeyProvider)? {
    switch seal {
    case nil: return nil
    case .keyFile(let keyPath): return FileSealingKeyProvider(path: keyPath)
    case .secretService:
      #if SecretService
        return SecretServiceSealingKeyProvider(configuration: try Self.configuration(path))
      #else
        preconditionFailure("no Secret Service support in this build")
      #endif
    }
  }

  #if SecretService
    private static func configuration(_ path: String) throws(CommandFailure)
      -> SecretServiceStoreConfiguration
    {
      let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
      do {
        return try SecretServiceStoreConfiguration(
          applicationID: "offline-ttl-cli:" + absolute, lockDirectory: absolute)
      } catch {
        throw CommandFailure(.ioError, "secret-service: \(error.reason)")
      }
    }
  #endif
}
