import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The tamper matrix of a sealed store, on the built binary: every altered, swapped, replayed or
/// replaced file is refused with its typed reason, the store's bytes are left exactly as they
/// were, and a sign-in recovers. Then the key cases, and the payload never on disk in plain text.
@Suite struct SealedStoreEndToEndTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// A scratch root holding a store, its key and the payload files.
  final class Scratch {
    let root: TemporaryStoreDirectory
    var store: String { root.path + "/store" }
    var key: String { root.path + "/key" }
    let binary: BinaryRunner

    init(_ binary: BinaryRunner) throws {
      self.binary = binary
      root = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-sealed")
    }

    deinit { root.remove() }

    func payload(_ text: String) throws -> String {
      let path = root.path + "/payload-" + UUID().uuidString
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
      return path
    }

    @discardableResult
    func signIn(
      _ items: [String: String], store: String? = nil, seal: String? = nil
    ) throws -> BinaryResult {
      var arguments = ["sign-in", "--store", store ?? self.store]
      if let seal = seal ?? "file:\(key)" as String?, !seal.isEmpty {
        arguments += ["--seal", seal]
      }
      for (name, text) in items.sorted(by: { $0.key < $1.key }) {
        arguments += ["--put", "\(name)=\(try payload(text))"]
      }
      let run = try binary.run(arguments)
      #expect(run.exitCode == 0, "sign-in: \(run.standardError)")
      return run
    }

    func read(_ name: String = "token", seal: String? = nil, store: String? = nil) throws
      -> BinaryResult
    {
      var arguments = ["read", "--store", store ?? self.store, "--max-age", "7d"]
      let seal = seal ?? "file:\(key)"
      if !seal.isEmpty { arguments += ["--seal", seal] }
      return try binary.run(arguments + [name])
    }

    func bytes(_ name: String) throws -> Data {
      try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
    }

    func write(_ data: Data, _ name: String) throws {
      try data.write(to: URL(fileURLWithPath: store + "/" + name))
    }

    func flip(_ name: String, at offset: Int) throws {
      var data = try bytes(name)
      let index = offset < 0 ? data.count + offset : offset
      data[index] ^= 0x01
      try write(data, name)
    }

    /// Every regular file of the store with its bytes.
    func snapshot() throws -> [String: Data] {
      var result: [String: Data] = [:]
      let names = FileManager.default.enumerator(atPath: store)?.allObjects as? [String] ?? []
      for name in names {
        var directory: ObjCBool = false
        if FileManager.default.fileExists(atPath: store + "/" + name, isDirectory: &directory),
          !directory.boolValue
        {
          result[name] = try bytes(name)
        }
      }
      return result
    }
  }

  /// The clock mark as `mark show` reads it with the store's key: `(mark ns, generation)`, or
  /// `nil` when it does not read.
  func markShown(_ scratch: Scratch) throws -> (mark: Int64, generation: UInt64)? {
    let shown = try binary.run([
      "mark", "show", "--store", scratch.store, "--seal", "file:\(scratch.key)", "--unit", "ns",
    ])
    let words = shown.standardOutput.split(whereSeparator: \.isWhitespace)
    guard shown.exitCode == 0, words.count == 4, let mark = Int64(words[1]),
      let generation = UInt64(words[3])
    else { return nil }
    return (mark, generation)
  }

  /// Reads `name`: refused (nonzero exit) with `code` on standard error, bytes unchanged; then a
  /// sign-in that rewrites `token` recovers. A refusal of the items still observes a readable
  /// clock mark (the time is seen; it rises once a second has passed since the sign-in, which a
  /// loaded machine often lets pass): every other file must keep its bytes, and the mark must
  /// read the same generation, with a mark not lower than before. When the mark itself is what
  /// was refused, it too must keep its bytes.
  func expectRefusedThenRecovered(
    _ scratch: Scratch, _ codes: [String], name: String = "token", _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let markRefused = codes.contains("mark_unauthentic")
    func files() throws -> [String: Data] {
      try scratch.snapshot().filter { markRefused || $0.key != "clock-mark" }
    }
    let before = try files()
    let markBefore = markRefused ? nil : try markShown(scratch)
    let read = try scratch.read(name)
    #expect(read.exitCode == 1, "\(what): exit \(read.exitCode)", sourceLocation: sourceLocation)
    #expect(
      codes.contains { read.standardError.contains($0) },
      "\(what): expected \(codes), got \(read.standardError)", sourceLocation: sourceLocation)
    #expect(try files() == before, "\(what): bytes changed", sourceLocation: sourceLocation)
    if let markBefore {
      // Observed forward at most: same generation and store (it still reads with the key).
      let markAfter = try markShown(scratch)
      #expect(
        markAfter?.generation == markBefore.generation
          && (markAfter?.mark ?? .min) >= markBefore.mark,
        "\(what): the mark went from \(markBefore) to \(markAfter.map { "\($0)" } ?? "unreadable")",
        sourceLocation: sourceLocation)
    }
    try scratch.signIn([name: "recovered"])
    let again = try scratch.read(name)
    #expect(
      again.exitCode == 0, "\(what): after sign-in: \(again.standardError)",
      sourceLocation: sourceLocation)
    #expect(again.standardOutput == "recovered", sourceLocation: sourceLocation)
  }

  @Test(arguments: ["token", "profile"], [0, 8, 16, 24, 32, 55, 56, -1])
  func aFlippedItemByteIsRefused(_ name: String, _ offset: Int) throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "the token", "profile": "the profile"])
    try s.flip("cache/items/\(name)", at: offset)
    try expectRefusedThenRecovered(
      s, ["item_unauthentic", "seal_mismatch"], name: name, "item \(name) byte \(offset)")
  }

  @Test(arguments: [0, 4, 8, 16, 32, 40, 48, 56, 64, 96, 127, 128, 140, -1])
  func aFlippedIndexByteIsRefused(_ offset: Int) throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "the token", "profile": "the profile"])
    try s.flip("cache/index", at: offset)
    try expectRefusedThenRecovered(
      s, ["index_unauthentic", "seal_mismatch"], "index byte \(offset)")
  }

  @Test(arguments: [0, 8, 16, 24, 32, 64, 76, 124, 256, 260, 268, 276, 307])
  func aFlippedByteOfEitherMarkSlotIsRefused(_ offset: Int) throws {
    for slot in [0, 4096] {
      let s = try Scratch(binary)
      try s.signIn(["token": "the token"])
      try s.flip("clock-mark", at: slot + offset)
      try expectRefusedThenRecovered(
        s, ["mark_unauthentic", "seal_mismatch"], "mark slot at \(slot) byte \(offset)")
    }
  }

  @Test func swappedItemsAreRefused() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "the token", "profile": "the profile"])
    let token = try s.bytes("cache/items/token")
    try s.write(try s.bytes("cache/items/profile"), "cache/items/token")
    try s.write(token, "cache/items/profile")
    #expect(try s.read("profile").standardError.contains("item_unauthentic"))
    try expectRefusedThenRecovered(s, ["item_unauthentic"], "swapped items")
  }

  @Test func anItemFromAnOlderGenerationIsRefused() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "old"])
    let old = try s.bytes("cache/items/token")
    try s.signIn(["token": "new"])
    try s.write(old, "cache/items/token")
    try expectRefusedThenRecovered(s, ["item_unauthentic"], "older generation's item")
  }

  @Test func anItemFromAnotherSealedStoreIsRefused() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "mine"])
    let other = s.root.path + "/other"
    try s.signIn(["token": "theirs"], store: other)
    try s.write(
      try Data(contentsOf: URL(fileURLWithPath: other + "/cache/items/token")), "cache/items/token")
    try expectRefusedThenRecovered(s, ["item_unauthentic"], "another store's item")
  }

  @Test func anIndexFromAnOlderGenerationIsRefused() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "old"])
    let old = try s.bytes("cache/index")
    try s.signIn(["token": "new"])
    try s.write(old, "cache/index")
    try expectRefusedThenRecovered(s, ["index_unauthentic"], "older generation's index")
  }

  @Test func aWholeUnsealedStoreThatReadsFreshIsRefused() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "sealed"])
    try FileManager.default.removeItem(atPath: s.store)
    try s.signIn(["token": "forged"], seal: "")
    let unsealed = try s.read(seal: "")
    #expect(unsealed.exitCode == 0 && unsealed.standardOutput == "forged")
    try expectRefusedThenRecovered(s, ["seal_mismatch"], "unsealed store")
  }

  @Test func thePayloadNeverAppearsOnDiskInPlainText() throws {
    let s = try Scratch(binary)
    let marker = "PLAINTEXT-MARKER-" + UUID().uuidString
    try s.signIn(["token": marker, "profile": marker])
    try s.signIn(["other": marker])
    for (name, data) in try s.snapshot() {
      #expect(data.range(of: Data(marker.utf8)) == nil, "\(name) holds the marker")
      #expect(data.range(of: Data("PLAINTEXT-MARKER".utf8)) == nil, "\(name)")
    }
    #expect(try s.read().standardOutput == marker)
  }

  /// One key problem: the `--seal` value, how to make it, the reason code, and the one error
  /// every command prints for it.
  struct KeyCase {
    var seal: String
    var reason: String
    var error: String
    var prepare: () throws -> Void = {}
  }

  /// Every key problem (wrong key, truncated, mode 0644, another owner, a link, missing, none
  /// given) is a typed refusal with its own reason, printed once, exactly: `status` exits 1 with
  /// `reasons: <reason>` and one `key_error:` line, `read` exits 1 with one line on stderr, a
  /// `sign-in` that cannot have the key exits 74 naming it; each quick, and nothing changes.
  @Test func keyCasesAreTypedPrintedOnceAndQuick() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "sealed"])
    let good = try Data(contentsOf: URL(fileURLWithPath: s.key))
    let store = s.store
    func keyFile(_ path: String, _ code: String, _ why: String) -> String {
      "key_unavailable: \(code) (key file \(path)): key file \(path) \(why)"
    }
    var cases: [KeyCase] = []
    let wrong = s.root.path + "/wrong"
    cases.append(
      KeyCase(
        seal: "file:\(wrong)", reason: "seal_mismatch",
        error: "seal_mismatch: clock-mark in \(store) is sealed with another key; left alone until"
          + " an online sign-in"
      ) {
        try Data((0..<32).map { UInt8($0) }).write(to: URL(fileURLWithPath: wrong))
        chmod(wrong, 0o600)
      })
    let short = s.root.path + "/short"
    cases.append(
      KeyCase(
        seal: "file:\(short)", reason: "key_unavailable",
        error: keyFile(short, "key_wrong_size", "is 31 bytes, not 32")
      ) {
        try good.prefix(31).write(to: URL(fileURLWithPath: short))
        chmod(short, 0o600)
      })
    let open = s.root.path + "/open"
    cases.append(
      KeyCase(
        seal: "file:\(open)", reason: "key_unavailable",
        error: keyFile(
          open, "key_insecure_mode", "has mode 0644; it must be 0600 (no group or other access)")
      ) {
        try good.write(to: URL(fileURLWithPath: open))
        chmod(open, 0o644)
      })
    let link = s.root.path + "/link"
    cases.append(
      KeyCase(
        seal: "file:\(link)", reason: "key_unavailable",
        error: keyFile(link, "key_symbolic_link", "is a symbolic link (never followed)")
      ) { try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: s.key) })
    let missing = s.root.path + "/missing"
    cases.append(
      KeyCase(
        seal: "file:\(missing)", reason: "key_unavailable",
        error: "key_unavailable: key_missing (key file \(missing)): no key file at \(missing);"
          + " only an online sign-in creates one"))
    if geteuid() == 0 {
      let foreign = s.root.path + "/foreign"
      cases.append(
        KeyCase(
          seal: "file:\(foreign)", reason: "key_unavailable",
          error: keyFile(
            foreign, "key_wrong_owner", "belongs to user 65534, not to this user (0)")
        ) {
          try good.write(to: URL(fileURLWithPath: foreign))
          chmod(foreign, 0o600)
          chown(foreign, 65_534, 65_534)
        })
    } else {
      // Without root a file cannot be given away: a file root owns, readable by everyone, is
      // another user's key file (the owner is checked before mode and size).
      cases.append(
        KeyCase(
          seal: "file:/etc/hostname", reason: "key_unavailable",
          error: keyFile(
            "/etc/hostname", "key_wrong_owner",
            "belongs to user 0, not to this user (\(geteuid()))")))
    }
    cases.append(
      KeyCase(
        seal: "", reason: "key_required",
        error: "key_required: clock-mark in \(store) is sealed; open the store with its sealing"
          + " key"))
    for key in cases {
      try key.prepare()
      let seal = key.seal.isEmpty ? [] : ["--seal", key.seal]
      let before = try s.snapshot()
      let read = try s.read(seal: key.seal)
      #expect(read.exitCode == 1, "\(key.reason): exit \(read.exitCode)")
      #expect(read.standardOutput == "")
      #expect(
        read.standardError == "error: refused: expired: \(key.reason) (\(key.error))\n",
        "\(key.seal)")
      #expect(!read.timedOut, "\(key.error): killed after \(read.elapsed)")
      let status = try binary.run(["status", "--store", store, "--max-age", "7d"] + seal)
      #expect(status.exitCode == 1, "\(key.seal): exit \(status.exitCode)")
      let lines = status.standardOutput.split(separator: "\n").map(String.init)
      #expect(lines.contains("reasons: \(key.reason)"), "\(key.seal): \(status.standardOutput)")
      #expect(
        lines.filter { $0.hasSuffix("_error: \(key.error)") } == ["key_error: \(key.error)"],
        "\(key.seal): \(status.standardOutput)")
      #expect(!status.standardOutput.contains("mark_error"), "\(key.seal)")
      #expect(!status.standardOutput.contains("item_error"), "\(key.seal)")
      let json = try binary.run(["status", "--store", store, "--max-age", "7d", "--json"] + seal)
      let object = try json.jsonObject()
      #expect(object["reasons"] as? [String] == [key.reason], "\(key.seal)")
      #expect(object["key_error"] as? String == key.error, "\(key.seal)")
      #expect(object["mark_error"] is NSNull && object["item_error"] is NSNull, "\(key.seal)")
      // The key's own problem, typed: the code after `key_unavailable: `, none for the others.
      let problem =
        key.reason == "key_unavailable"
        ? key.error.dropFirst("key_unavailable: ".count).prefix { $0 != " " } : nil
      #expect(
        object["key_error_code"] as? String == problem.map(String.init),
        "\(key.seal): \(json.standardOutput)")
      if let problem {
        #expect(problem.hasPrefix("key_") && problem != "key_unavailable", "\(problem)")
      }
      #expect(try s.snapshot() == before, "\(key.seal): bytes changed")
    }
    #expect(!FileManager.default.fileExists(atPath: missing), "the offline path created a key")
    #expect(try s.read().standardOutput == "sealed", "the right key still reads")
  }

  /// A sign-in whose key file cannot be used (it does not create one over a bad file) exits 74
  /// with the key's problem once, and writes nothing.
  @Test func aSignInWithAnUnusableKeyFileNamesItOnce() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "sealed"])
    let short = s.root.path + "/short"
    try Data(repeating: 7, count: 31).write(to: URL(fileURLWithPath: short))
    chmod(short, 0o600)
    let before = try s.snapshot()
    let run = try binary.run(["sign-in", "--store", s.store, "--seal", "file:\(short)"])
    #expect(run.exitCode == 74)
    #expect(run.standardOutput == "")
    #expect(
      run.standardError
        == "error: sign-in failed: cache_store_failed: key_unavailable: key_wrong_size (key file"
        + " \(short)): key file \(short) is 31 bytes, not 32\n")
    #expect(try s.snapshot() == before, "bytes changed")
  }

  /// A sign-in whose roll forward fails after its commit point (every `renameat` fails: the
  /// staging is written and the mark reset before the first one) is committed: exit 0, the usual
  /// line, and one warning naming the failure; readers see the new item through the staging, and
  /// the next sign-in finishes it. Sealed and unsealed alike.
  @Test(
    .enabled(if: toolIsInstalled("strace"), "needs strace (Debian package strace)"),
    arguments: [true, false])
  func aRollForwardFailingAfterTheCommitPointIsAWarning(_ sealed: Bool) throws {
    let s = try Scratch(binary)
    let seal = sealed ? "file:\(s.key)" : ""
    try s.signIn(["token": "old"], seal: seal)
    let strace = [
      "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=renameat,renameat2", "-e",
      "inject=renameat,renameat2:error=EIO",
    ]
    let run = try binary.run(
      ["sign-in", "--store", s.store, "--put", "token=\(try s.payload("new"))"]
        + (sealed ? ["--seal", seal] : []), launcher: strace, timeout: .seconds(60))
    #expect(run.exitCode == 0, "\(run.standardError)")
    #expect(run.standardOutput.hasPrefix("signed in: generation 2, "), "\(run.standardOutput)")
    let lines = run.standardError.split(separator: "\n").map(String.init)
    #expect(lines.count == 1, "\(run.standardError)")
    #expect(
      lines.first?.hasPrefix(
        "warning: write_failed: the sign-in is committed but its roll forward failed: ") == true,
      "\(run.standardError)")
    #expect(
      lines.first?.hasSuffix("; readers see the new items, the next sign-in finishes it") == true,
      "\(run.standardError)")
    #expect(FileManager.default.fileExists(atPath: s.store + "/cache/pending"))
    #expect(try s.read(seal: seal).standardOutput == "new")
    let finish = try s.signIn([:], seal: seal)
    #expect(finish.standardError == "")
    #expect(!FileManager.default.fileExists(atPath: s.store + "/cache/pending"))
    #expect(try s.read(seal: seal).standardOutput == "new")
  }

  @Test func theDemoTellsTheWholeStoryOnASealedStore() throws {
    let s = try Scratch(binary)
    let run = try binary.run(["demo", "--seal", "file:\(s.key)", "--json"])
    #expect(run.exitCode == 0, "\(run.standardError)")
    #expect(FileManager.default.fileExists(atPath: s.key), "the demo's sign-in created the key")
  }
}
