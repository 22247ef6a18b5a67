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

  /// Reads `name`: refused (nonzero exit) with `code` on standard error, bytes unchanged; then a
  /// sign-in that rewrites `token` recovers.
  func expectRefusedThenRecovered(
    _ scratch: Scratch, _ codes: [String], name: String = "token", _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let before = try scratch.snapshot()
    let read = try scratch.read(name)
    #expect(read.exitCode == 1, "\(what): exit \(read.exitCode)", sourceLocation: sourceLocation)
    #expect(
      codes.contains { read.standardError.contains($0) },
      "\(what): expected \(codes), got \(read.standardError)", sourceLocation: sourceLocation)
    #expect(
      try scratch.snapshot() == before, "\(what): bytes changed", sourceLocation: sourceLocation)
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

  @Test func keyCasesAreTypedAndQuick() throws {
    let s = try Scratch(binary)
    try s.signIn(["token": "sealed"])
    let good = try Data(contentsOf: URL(fileURLWithPath: s.key))
    var cases: [(String, String, () throws -> Void)] = []
    let wrong = s.root.path + "/wrong"
    try Data((0..<32).map { UInt8($0) }).write(to: URL(fileURLWithPath: wrong))
    chmod(wrong, 0o600)
    cases.append(("file:\(wrong)", "seal_mismatch", {}))
    let short = s.root.path + "/short"
    cases.append(
      (
        "file:\(short)", "key_wrong_size",
        {
          try good.prefix(31).write(to: URL(fileURLWithPath: short))
          chmod(short, 0o600)
        }
      ))
    let open = s.root.path + "/open"
    cases.append(
      (
        "file:\(open)", "key_insecure_mode",
        {
          try good.write(to: URL(fileURLWithPath: open))
          chmod(open, 0o644)
        }
      ))
    let link = s.root.path + "/link"
    cases.append(
      (
        "file:\(link)", "key_symbolic_link",
        { try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: s.key) }
      ))
    let missing = s.root.path + "/missing"
    cases.append(("file:\(missing)", "key_missing", {}))
    let foreign = s.root.path + "/foreign"
    if geteuid() == 0 {
      cases.append(
        (
          "file:\(foreign)", "key_wrong_owner",
          {
            try good.write(to: URL(fileURLWithPath: foreign))
            chmod(foreign, 0o600)
            chown(foreign, 65_534, 65_534)
          }
        ))
    } else {
      // Without root a file cannot be given away: a file root owns, readable by everyone, is
      // another user's key file (the owner is checked before mode and size).
      cases.append(("file:/etc/hostname", "key_wrong_owner", {}))
    }
    cases.append(("", "key_required", {}))
    for (seal, code, prepare) in cases {
      try prepare()
      let before = try s.snapshot()
      let read = try s.read(seal: seal)
      #expect(read.exitCode == 1, "\(code): exit \(read.exitCode)")
      #expect(read.standardError.contains(code), "\(code): \(read.standardError)")
      #expect(read.elapsed < .seconds(10), "\(code) took \(read.elapsed)")
      #expect(try s.snapshot() == before, "\(code): bytes changed")
    }
    #expect(!FileManager.default.fileExists(atPath: missing), "the offline path created a key")
    #expect(try s.read().standardOutput == "sealed", "the right key still reads")
  }

  @Test func theDemoTellsTheWholeStoryOnASealedStore() throws {
    let s = try Scratch(binary)
    let run = try binary.run(["demo", "--seal", "file:\(s.key)", "--json"])
    #expect(run.exitCode == 0, "\(run.standardError)")
    #expect(FileManager.default.fileExists(atPath: s.key), "the demo's sign-in created the key")
  }
}
