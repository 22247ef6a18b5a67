#if SecretService
  import Foundation
  import Testing

  /// The first libsecret calls of a process, made from many threads at once. libsecret 0.20
  /// registers its enum and flags types without a lock; before the stores registered them once
  /// themselves, two threads meeting there made GLib refuse one registration ("cannot register
  /// existing type 'SecretSchemaAttributeType'") and that thread's call never returned. Each case
  /// runs in a fresh child process, since a type is registered once per process.
  @Suite struct SecretServiceFirstUseTests {
    let probe = SecretServiceTestSupport.product("offline-ttl-secret-probe")

    /// Deterministic: one store operation registers every enum and flags type of libsecret, not
    /// only the ones that operation happens to use (without the stores' own registration, one
    /// read left 10 of the 11 unregistered, to be registered later by whichever threads came
    /// first). The operation fails fast here (no session bus); the registration comes before
    /// the connection.
    @Test func oneStoreOperationRegistersEveryLibsecretEnumTypeFirst() throws {
      let lockDirectory = try SecretServiceTestSupport.temporaryDirectory()
      let output = try SecretServiceTestSupport.run(
        probe, ["org.offlinettl.tests.types", lockDirectory, "types"],
        environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(lockDirectory)/no-such-bus"])
      #expect(output.value("before") == "0", "a fresh process has none registered")
      #expect(output.value("after") == "11")
      #expect(output.value("missing") == "none")
      #expect(!output.standardError.contains("GLib-GObject"), "\(output.standardError)")
    }

    /// The race itself, on the real keyring: eight threads released by a barrier make their
    /// process's first store calls together (a reset and a read each), in 24 fresh processes.
    /// Before the fix, 1 process in 40 to 80 hung this way (8 threads, load 0 to 13), so this
    /// case alone catches a regression only sometimes; the deterministic case above always does.
    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing))
    func threadsMakingTheProcesssFirstCallsTogetherAllFinish() throws {
      let lockDirectory = try SecretServiceTestSupport.temporaryDirectory()
      for run in 0..<24 {
        let applicationID = SecretServiceTestSupport.uniqueApplicationID() + ".\(run)"
        let output = try SecretServiceTestSupport.start(
          probe, [applicationID, lockDirectory, "first-use", "8"]
        ).wait(limit: .seconds(60))
        #expect(output.status == 0, "run \(run): \(output.standardOutput)")
        #expect(output.standardOutput.hasPrefix("ok threads=8"), "run \(run)")
        #expect(
          !output.standardError.contains("cannot register existing type"),
          "run \(run): \(output.standardError)")
        #expect(!output.standardError.contains("CRITICAL"), "run \(run): \(output.standardError)")
        if output.status != 0 { break }
      }
    }
  }
#endif
