#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLSecretService
  import Testing

  #if canImport(Glibc)
    import Glibc
  #endif

  /// Paths that are not valid UTF-8 on the keyring side: the command line's store path (lock
  /// directory and application id) built from a working directory whose name is not UTF-8, and
  /// a library lock directory given as a URL of such bytes. Decoded with U+FFFD, each named
  /// another directory, and every command failed with `ENOENT`.
  @Suite(
    .enabled(if: SecretServiceTestSupport.keyringReady, SecretServiceTestSupport.keyringMissing),
    .enabled(if: SecretServiceTestSupport.has("sh"), "needs sh (Debian: dash)"))
  struct SecretServicePathTests {
    /// Runs the built tool with `arguments` in `<scratch>/w\377x` (made 0700 first), a working
    /// directory whose name is the byte 0xFF between two letters.
    static func runInNonUTF8Directory(_ scratch: String, _ arguments: [String]) throws
      -> SecretServiceTestSupport.Output
    {
      let sh = try #require(SecretServiceTestSupport.which("sh"))
      return try SecretServiceTestSupport.run(
        sh,
        [
          "-c",
          #"d=$(printf 'w\377x') && cd "$SCRATCH" && mkdir -p -m 700 "$d" && cd "$d" && exec "$@""#,
          "sh", SecretServiceTestSupport.product("offline-ttl"),
        ] + arguments, environment: ["SCRATCH": scratch])
    }

    /// The raw bytes of the entries of `directory` (readdir, not Foundation, which decodes).
    static func entryBytes(_ directory: [UInt8]) -> [[UInt8]] {
      guard
        let stream = (directory + [0]).withUnsafeBufferPointer({ buffer in
          buffer.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
        })
      else { return [] }
      defer { closedir(stream) }
      var names: [[UInt8]] = []
      while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
        if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
      }
      return names
    }

    @Test func everyKeyringCommandWorksFromAWorkingDirectoryThatIsNotUTF8() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: scratch + "/token.txt"))
      let token = "token=" + scratch + "/token.txt"
      let backend = ["--backend", "secret-service"]

      let signIn = try Self.runInNonUTF8Directory(
        scratch, ["sign-in", "--store", "s", "--put", token] + backend)
      #expect(signIn.status == 0, "\(signIn.standardError)")
      let status = try Self.runInNonUTF8Directory(
        scratch, ["status", "--store", "s", "--max-age", "1d"] + backend)
      #expect(status.status == 0, "\(status.standardError)")
      #expect(status.standardOutput.hasPrefix("status: fresh\n"), "\(status.standardOutput)")
      let read = try Self.runInNonUTF8Directory(
        scratch, ["read", "--store", "s", "--max-age", "1d", "token"] + backend)
      #expect(read.status == 0, "\(read.standardError)")
      #expect(read.standardOutput == "secret-token")
      let show = try Self.runInNonUTF8Directory(
        scratch, ["mark", "show", "--store", "s"] + backend)
      #expect(show.status == 0, "\(show.standardError)")

      // A file store sealed with a keyring key, from the same directory.
      let sealed = ["--seal", "secret-service"]
      let sealedSignIn = try Self.runInNonUTF8Directory(
        scratch, ["sign-in", "--store", "f", "--put", token] + sealed)
      #expect(sealedSignIn.status == 0, "\(sealedSignIn.standardError)")
      let sealedRead = try Self.runInNonUTF8Directory(
        scratch, ["read", "--store", "f", "--max-age", "1d", "token"] + sealed)
      #expect(sealedRead.status == 0, "\(sealedRead.standardError)")
      #expect(sealedRead.standardOutput == "secret-token")

      // The lock files are in the store directory under the real name (w, 0xFF, x), and the
      // directory that a U+FFFD spelling names was never made.
      let directory = Array(scratch.utf8) + [0x2F, 0x77, 0xFF, 0x78]
      #expect(Self.entryBytes(Array(scratch.utf8)).contains([0x77, 0xFF, 0x78]))
      #expect(!FileManager.default.fileExists(atPath: scratch + "/w\u{FFFD}x"))
      let locks = Self.entryBytes(directory + Array("/s".utf8)).map {
        String(decoding: $0, as: UTF8.self)
      }
      #expect(locks.contains { $0.hasSuffix(".marks.lock") }, "\(locks)")
      #expect(locks.contains { $0.hasSuffix(".items.lock") }, "\(locks)")
      // The key's lock file beside the sealed store's own files.
      let sealedFiles = Self.entryBytes(directory + Array("/f".utf8)).map {
        String(decoding: $0, as: UTF8.self)
      }
      #expect(sealedFiles.contains { $0.hasSuffix(".sealing-key.lock") }, "\(sealedFiles)")
    }

    @Test func twoStoresWhosePathsDifferOnlyInBytesThatAreNotUTF8AreTwoStores() throws {
      // `w\377x/s` and `w\376x/s`: one U+FFFD spelling, two application ids.
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      try Data("first".utf8).write(to: URL(fileURLWithPath: scratch + "/first.txt"))
      let first = try Self.runInNonUTF8Directory(
        scratch,
        ["sign-in", "--store", "s", "--put", "token=" + scratch + "/first.txt"]
          + ["--backend", "secret-service"])
      #expect(first.status == 0, "\(first.standardError)")
      let sh = try #require(SecretServiceTestSupport.which("sh"))
      let other = try SecretServiceTestSupport.run(
        sh,
        [
          "-c",
          #"d=$(printf 'w\376x') && cd "$SCRATCH" && mkdir -p -m 700 "$d/s" && cd "$d" && exec "$@""#,
          "sh", SecretServiceTestSupport.product("offline-ttl"), "read", "--store", "s",
          "--max-age", "1d", "token", "--backend", "secret-service",
        ], environment: ["SCRATCH": scratch])
      #expect(other.status == 2, "no item there: \(other.standardOutput) \(other.standardError)")
      #expect(other.standardOutput == "")
    }

    @Test func aLockDirectoryURLWhoseBytesAreNotUTF8IsUsedAsIs() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let bytes = Array(scratch.utf8) + [0x2F, 0x6C, 0xFF]  // <scratch>/l\377
      // Foundation on Linux decodes `init(fileURLWithFileSystemRepresentation:)` with U+FFFD
      // itself; a percent escape keeps the byte.
      let url = try #require(URL(string: "file://" + scratch + "/l%FF"))
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: SecretServiceTestSupport.uniqueApplicationID(), lockDirectory: url,
        timeout: SecretServiceTestSupport.callLimit,
        lockTimeout: SecretServiceTestSupport.lockLimit)
      let record = try SecretServiceClockMarkStore(configuration: configuration)
        .resetAfterOnlineSignIn(now: .at(7))
      #expect(record.generation == 1)
      #expect(Self.entryBytes(Array(scratch.utf8)) == [[0x6C, 0xFF]])
      let locks = Self.entryBytes(bytes).map { String(decoding: $0, as: UTF8.self) }
      #expect(locks.count == 1 && locks[0].hasSuffix(".marks.lock"), "\(locks)")
    }

    @Test func aStoreReachedThroughASymbolicLinkIsOneStoreWithOneKey() throws {
      // `link` -> `real`: the sealed store and the keyring store signed in through the link are
      // found by their real path (before, the key was missing there and a sign-in re-sealed,
      // dropping the items), and the other way round.
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      try FileManager.default.createDirectory(
        atPath: scratch + "/real", withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
      try FileManager.default.createSymbolicLink(
        atPath: scratch + "/link", withDestinationPath: "real")
      try Data("secret-token".utf8).write(to: URL(fileURLWithPath: scratch + "/token.txt"))
      let tool = SecretServiceTestSupport.product("offline-ttl")
      for options in [["--seal", "secret-service"], ["--backend", "secret-service"]] {
        for (writer, reader) in [("link", "real"), ("real", "link/.")] {
          let store = "/" + options[0].dropFirst(2) + "-" + writer
          let signIn = try SecretServiceTestSupport.run(
            tool,
            [
              "sign-in", "--store", scratch + "/" + writer + store, "--put",
              "token=" + scratch + "/token.txt",
            ] + options)
          #expect(signIn.status == 0, "\(options) \(writer): \(signIn.standardError)")
          let read = try SecretServiceTestSupport.run(
            tool,
            ["read", "--store", scratch + "/" + reader + store, "--max-age", "1d", "token"]
              + options)
          #expect(read.status == 0, "\(options) \(reader): \(read.standardError)")
          #expect(read.standardOutput == "secret-token", "\(options) \(reader)")
        }
      }
    }

    /// Before 0.4.0 a store's secrets were named by its path made absolute lexically. Left here
    /// as such a version left them: stores signed in at `old/<name>` while `old` was a real
    /// directory, which then became `real` with `old` a link to it. Through `old/<name>` the
    /// commands find the secrets under that name (its real path's name holds none) and a
    /// sign-in keeps them (a sealed store is not re-sealed, dropping its items); `x/../<name>`,
    /// with `x` a link into another directory, names another store and never takes the secrets
    /// of the store at `<name>`.
    @Test func aStoreNamedByItsLinkedSpellingBeforeIsStillFoundThroughIt() throws {
      let scratch = try SecretServiceTestSupport.temporaryDirectory()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let manager = FileManager.default
      let private0700: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
      try manager.createDirectory(
        atPath: scratch + "/old", withIntermediateDirectories: false,
        attributes: private0700)
      try manager.createDirectory(
        atPath: scratch + "/elsewhere/inner", withIntermediateDirectories: true,
        attributes: private0700)
      try manager.createSymbolicLink(atPath: scratch + "/x", withDestinationPath: "elsewhere/inner")
      for version in ["one", "two"] {
        try Data("token-\(version)".utf8).write(to: URL(fileURLWithPath: scratch + "/" + version))
      }
      let tool = SecretServiceTestSupport.product("offline-ttl")
      let choices = [["--seal", "secret-service"], ["--backend", "secret-service"]]
      func store(_ options: [String]) -> String { String(options[0].dropFirst(2)) }
      for options in choices {
        let signIn = try SecretServiceTestSupport.run(
          tool,
          ["sign-in", "--store", scratch + "/old/" + store(options), "--put", "t=\(scratch)/one"]
            + options)
        try #require(signIn.status == 0, "\(options): \(signIn.standardError)")
        // Another store at `<name>`, named by its real path.
        let other = try SecretServiceTestSupport.run(
          tool,
          ["sign-in", "--store", scratch + "/" + store(options), "--put", "t=\(scratch)/two"]
            + options)
        try #require(other.status == 0, "\(options): \(other.standardError)")
        try manager.createDirectory(
          atPath: scratch + "/elsewhere/" + store(options), withIntermediateDirectories: false,
          attributes: private0700)
      }
      try manager.moveItem(atPath: scratch + "/old", toPath: scratch + "/real")
      try manager.createSymbolicLink(atPath: scratch + "/old", withDestinationPath: "real")
      for options in choices {
        func read(_ path: String) throws -> SecretServiceTestSupport.Output {
          try SecretServiceTestSupport.run(
            tool, ["read", "--store", path, "--max-age", "1d", "t"] + options)
        }
        let linked = scratch + "/old/" + store(options)
        let found = try read(linked)
        #expect(found.status == 0, "\(options): \(found.standardError)")
        #expect(found.standardOutput == "token-one", "\(options)")
        let again = try SecretServiceTestSupport.run(
          tool, ["sign-in", "--store", linked, "--put", "t=\(scratch)/two"] + options)
        #expect(again.status == 0, "\(options): \(again.standardError)")
        #expect(!again.standardOutput.contains("dropped"), "\(options): \(again.standardOutput)")
        #expect(try read(linked).standardOutput == "token-two", "\(options)")
        let elsewhere = try read(scratch + "/x/../" + store(options))
        #expect(elsewhere.status != 0, "\(options): \(elsewhere.standardOutput)")
        #expect(!elsewhere.standardOutput.contains("token"), "\(options)")
      }
    }

    @Test func anApplicationIDWithNULIsRefused() {
      // libsecret takes C strings: `a\0b` would be the attribute `a`, another id's secrets.
      #expect(throws: InvalidValueError.self) {
        try SecretServiceStoreConfiguration(applicationID: "a\u{0}b", lockDirectory: "/tmp")
      }
    }
  }
#endif
