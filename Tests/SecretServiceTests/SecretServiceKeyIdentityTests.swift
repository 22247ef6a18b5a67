#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  /// A keyring key is named by its application id and key name: two providers with those alike
  /// are one key for a gate (whatever their lock directories and limits), any other pair is
  /// refused as sealed differently, and the two parts never run into each other. No keyring is
  /// needed: the identity and the gate's comparison do no I/O.
  @Suite struct SecretServiceKeyIdentityTests {
    static func provider(
      _ application: String, _ name: String, locks: String = "/tmp/a",
      timeout: Duration = .seconds(5)
    ) throws -> SecretServiceSealingKeyProvider {
      SecretServiceSealingKeyProvider(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: application, lockDirectory: locks, timeout: timeout),
        name: name)
    }

    static func conflict(
      _ cache: any SealingKeyProvider, _ marks: any SealingKeyProvider
    ) throws -> StoreError? {
      OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: "/nonexistent/store", sealing: cache),
        marks: FileClockMarkStore(atPath: "/nonexistent/store", sealing: marks),
        policy: try EligibilityPolicy(maxAge: .seconds(60))
      ).sealingConflict
    }

    @Test func theSameApplicationAndNameAreOneKey() throws {
      let one = try Self.provider("app", "store")
      let other = try Self.provider("app", "store", locks: "/tmp/b", timeout: .seconds(9))
      #expect(one.keyIdentity() == other.keyIdentity())
      #expect(try Self.conflict(one, other) == nil)
    }

    @Test(arguments: [
      ("app", "store", "app", "other"), ("app", "store", "app2", "store"),
      // Described alike (`Secret Service key a/b/c`), but two secrets.
      ("a/b", "c", "a", "b/c"),
    ])
    func anotherApplicationOrNameIsAnotherKey(
      _ a1: String, _ n1: String, _ a2: String, _ n2: String
    )
      throws
    {
      let one = try Self.provider(a1, n1)
      let other = try Self.provider(a2, n2)
      #expect(one.keyIdentity() != other.keyIdentity())
      #expect(try Self.conflict(one, other)?.code == .storesSealedDifferently)
    }

    @Test func aKeyFileIsNeverAKeyringKey() throws {
      let keyring = try Self.provider("app", "store")
      let file = FileSealingKeyProvider(path: "/tmp/keys/store")
      #expect(try Self.conflict(keyring, file)?.code == .storesSealedDifferently)
      #expect(try Self.conflict(file, keyring)?.code == .storesSealedDifferently)
    }
  }
#endif
