#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  @Suite struct SecretServiceStoreConfigurationTests {
    @Test func invalidValuesAreRejected() {
      #expect(throws: InvalidValueError.self) {
        try SecretServiceStoreConfiguration(applicationID: "", lockDirectory: "/tmp")
      }
      #expect(throws: InvalidValueError.self) {
        try SecretServiceStoreConfiguration(
          applicationID: "a", lockDirectory: "/tmp", timeout: .zero)
      }
      #expect(throws: InvalidValueError.self) {
        try SecretServiceStoreConfiguration(
          applicationID: "a", lockDirectory: "/tmp", lockTimeout: .seconds(-1))
      }
    }

    @Test func theLockDirectoryMayBeAFileURL() throws {
      let byURL = try SecretServiceStoreConfiguration(
        applicationID: "a", lockDirectory: URL(fileURLWithPath: "/tmp/offline ttl/locks"))
      let byPath = try SecretServiceStoreConfiguration(
        applicationID: "a", lockDirectory: "/tmp/offline ttl/locks")
      #expect(byURL == byPath)
      #expect(byURL.lockDirectory == "/tmp/offline ttl/locks")
      #expect(throws: InvalidValueError.self) {
        try SecretServiceStoreConfiguration(
          applicationID: "", lockDirectory: URL(fileURLWithPath: "/tmp"))
      }
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func theDefaultLockDirectoryIsCreated0700UnderXDGRuntimeDir() throws {
      // Scripts/with-secret-service.sh gives every run a fresh XDG_RUNTIME_DIR.
      let runtime = try #require(ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"])
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: SecretServiceTestSupport.uniqueApplicationID() + "/with slash")
      #expect(configuration.lockDirectory == runtime + "/offline-ttl")
      _ = try SecretServiceClockMarkStore(configuration: configuration)
        .resetAfterOnlineSignIn(now: .at(1))
      let attributes = try FileManager.default.attributesOfItem(
        atPath: configuration.lockDirectory)
      #expect((attributes[.posixPermissions] as? Int) == 0o700)
      let names = try FileManager.default.contentsOfDirectory(atPath: configuration.lockDirectory)
      let expected =
        "secret-service."
        + configuration.applicationID.replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: " ", with: "_") + ".marks.lock"
      #expect(names.contains(expected), "\(names)")
    }
  }
#endif
