#if SecretService
  import Foundation
  import Testing

  /// The rollback-twice scenario end to end: the built `offline-ttl` with
  /// `--backend secret-service`, each run's wall clock frozen by libfaketime
  /// (`FAKETIME_DONT_FAKE_MONOTONIC=1`: the boot clock and the store's watchdog stay real).
  @Suite struct SecretServiceCommandLineTests {
    static let day: Int64 = 86_400
    static let library = [
      "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
      "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
      "/usr/lib/faketime/libfaketime.so.1",
    ].first { FileManager.default.fileExists(atPath: $0) }

    static func run(_ arguments: [String], at seconds: Int64?) throws
      -> SecretServiceTestSupport.Output
    {
      var environment: [String: String?] = [:]
      if let seconds, let library {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        environment = [
          "LD_PRELOAD": library,
          "FAKETIME": formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))),
          "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1", "TZ": "UTC",
        ]
      }
      return try SecretServiceTestSupport.run(
        SecretServiceTestSupport.product("offline-ttl"), arguments, environment: environment)
    }

    static func json(_ output: SecretServiceTestSupport.Output) throws -> [String: Any] {
      let data = Data(output.standardOutput.utf8)
      return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
      .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing),
      .enabled(
        if: Self.library != nil,
        "needs libfaketime.so.1 (Debian: faketime)"))
    func rollbackTwiceIsRefusedKeepsTheItemAndSignInRecovers() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      let store = scratch + "/store"
      let input = scratch + "/token.txt"
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: input))
      let backend = ["--backend", "secret-service"]
      let now = Int64(Date().timeIntervalSince1970)

      let signIn = try Self.run(
        ["sign-in", "--store", store, "--put", "token=\(input)"] + backend, at: nil)
      #expect(signIn.status == 0, "\(signIn.standardError)")
      #expect(
        !FileManager.default.fileExists(atPath: store + "/cache"), "no item is kept in files")
      let itemBefore = try SecretServiceTestSupport.itemSecret(store: store, key: "token")

      // Two days ahead with a one-day max age: too old; the mark rises there.
      let ahead = try Self.run(
        ["status", "--store", store, "--max-age", "1d", "--json"] + backend, at: now + 2 * Self.day)
      #expect(ahead.status == 1)
      #expect(try Self.json(ahead)["reasons"] as? [String] == ["too_old"])
      let high = (now + 2 * Self.day) * 1_000_000_000
      #expect((try Self.json(ahead)["mark_ns"] as? NSNumber)?.int64Value == high)

      // Rollback 1: one day ahead, after the write but behind the mark.
      let behind = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"] + backend, at: now + Self.day)
      #expect(behind.status == 1)
      #expect(try Self.json(behind)["reasons"] as? [String] == ["clock_behind_mark"])

      // Rollback 2: before the write.
      let before = try Self.run(
        ["status", "--store", store, "--max-age", "30d", "--json"] + backend, at: now - Self.day)
      #expect(before.status == 1)
      let reasons = try #require(try Self.json(before)["reasons"] as? [String])
      #expect(reasons.contains("clock_behind_mark"))
      #expect(reasons.contains("item_from_future"))

      // Read offline: refused; the mark still holds; the item's secret is byte for byte intact.
      let read = try Self.run(
        ["read", "--store", store, "--max-age", "30d", "token"] + backend, at: now - Self.day)
      #expect(read.status == 1)
      #expect(read.standardOutput == "")
      #expect(read.standardError.hasPrefix("error: refused: expired: clock_behind_mark"))
      let show = try Self.run(
        ["mark", "show", "--dir", store, "--unit", "ns"] + backend, at: nil)
      #expect(show.standardOutput == "mark \(high) generation 1\n")
      #expect(try SecretServiceTestSupport.itemSecret(store: store, key: "token") == itemBefore)

      // An online sign-in under the real clock recovers.
      let again = try Self.run(["sign-in", "--store", store] + backend, at: nil)
      #expect(again.status == 0, "\(again.standardError)")
      let readAgain = try Self.run(
        ["read", "--store", store, "--max-age", "1d", "token"] + backend, at: nil)
      #expect(readAgain.status == 0, "\(readAgain.standardError)")
      #expect(readAgain.standardOutput == "secret-token")
    }

    @Test func anUnknownBackendIsAUsageError() throws {
      let run = try Self.run(
        ["status", "--store", "/tmp", "--max-age", "1d", "--backend", "cloud"], at: nil)
      #expect(run.status == 64)
      #expect(
        run.standardError.hasPrefix(
          "error: --backend: unknown backend 'cloud' (use file or secret-service)"))
    }

    @Test func helpListsTheBackendOption() throws {
      for subcommand in ["status", "read", "sign-in", "mark"] {
        let run = try Self.run([subcommand, "--help"], at: nil)
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("--backend <file|secret-service>"), "\(subcommand)")
      }
    }
  }
#endif
