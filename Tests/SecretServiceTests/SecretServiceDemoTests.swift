#if SecretService
  import Foundation
  import Testing

  /// `demo --seal secret-service` leaves no key behind: the key is named by the demo's temporary
  /// store and goes with it (each run left one more before), unless `--keep` keeps both.
  @Suite(
    .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing),
    .enabled(
      if: SecretServiceTestSupport.has("secret-tool"),
      "needs secret-tool (Debian: libsecret-tools)"))
  struct SecretServiceDemoTests {
    /// The application ids of the keyring's sealing keys under `directory`'s demo stores.
    static func demoKeys(under directory: String) throws -> [String] {
      let secretTool = try #require(SecretServiceTestSupport.which("secret-tool"))
      let output = try SecretServiceTestSupport.run(
        secretTool,
        ["search", "--all", "xdg:schema", "org.offlinettl.Secret", "kind", "sealing-key"])
      let prefix = "attribute.application = offline-ttl-cli:" + directory + "/offline-ttl-demo-"
      return (output.standardOutput + output.standardError).split(separator: "\n")
        .filter { $0.hasPrefix(prefix) }.map(String.init)
    }

    @Test func theDemoDeletesItsKeyringKeyUnlessKept() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let tool = SecretServiceTestSupport.product("offline-ttl")
      for _ in 0..<2 {
        let demo = try SecretServiceTestSupport.run(
          tool, ["demo", "--seal", "secret-service"], environment: ["TMPDIR": scratch])
        #expect(demo.status == 0, "\(demo.standardError)")
        #expect(demo.standardOutput.contains("(created now)"), "\(demo.standardOutput)")
      }
      #expect(try Self.demoKeys(under: scratch) == [], "no key left after two runs")
      let kept = try SecretServiceTestSupport.run(
        tool, ["demo", "--seal", "secret-service", "--keep"], environment: ["TMPDIR": scratch])
      #expect(kept.status == 0, "\(kept.standardError)")
      #expect(try Self.demoKeys(under: scratch).count == 1, "kept with the store")
    }
  }
#endif
