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
enum StoreBackend: Equatable {
  case file
  case secretService

  /// The `--backend` option, listed only when the Secret Service backend is built in.
  static var optionSpecs: [OptionSpec] {
    #if SecretService
      [.backend]
    #else
      []
    #endif
  }

  /// The `--backend` value; `file` when absent.
  ///
  /// - Throws: ``UsageError`` for any other value.
  static func parse(_ arguments: ParsedArguments) throws(UsageError) -> StoreBackend {
    #if SecretService
      let value = arguments.value(.backend)
    #else
      // This build does not declare --backend, so the reader rejected it already.
      let value: String? = nil
    #endif
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
    switch self {
    case .file: return FileClockMarkStore(atPath: path)
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
    switch self {
    case .file: return DirectoryCacheStore(at: path)
    case .secretService:
      #if SecretService
        return SecretServiceCacheStore(configuration: try Self.configuration(path))
      #else
        preconditionFailure("no Secret Service backend in this build")
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
