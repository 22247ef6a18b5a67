import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A sign-in that does not write an old item again carries it only when a read would serve it:
/// every carried item is judged as `read` judges it (a private regular file, the size its header
/// or the index says, the payload's CRC-32 or its AEAD tags, the generation and store it is
/// bound to), and one a read would refuse is dropped, removed from the store and named in the
/// confirmation with the code a read refuses it with. On the built binary, sealed and
/// unsealed, with and without `--put`.
@Suite struct SignInDropsRefusedItemsEndToEndTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// The launcher that takes from the command (root in this image) the capabilities that let
  /// root open a file of mode 0000, so that it sees what any other user sees.
  static let withoutOverride = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]

  /// One way to damage the item `token` after a sign-in, with the codes a read refuses it with.
  struct Damage: CustomStringConvertible, Sendable {
    let name: String
    /// Which stores it applies to: an unsealed item is bound to no generation or store, so an
    /// item copied from elsewhere reads there.
    let sealedOnly: Bool
    /// The codes a read refuses it with, unsealed and sealed.
    let unsealedCodes: Set<String>
    let sealedCodes: Set<String>
    var launcher: [String] { name == "mode 0000" ? withoutOverride : [] }
    var description: String { name }

    static let all: [Damage] = [
      Damage(
        name: "bad checksum", sealedOnly: false, unsealedCodes: ["item_unreadable"],
        sealedCodes: ["item_unauthentic"]),
      Damage(
        name: "truncated", sealedOnly: false, unsealedCodes: ["item_unreadable"],
        sealedCodes: ["item_unauthentic", "item_unreadable"]),
      Damage(
        name: "sparse 1 TiB", sealedOnly: false, unsealedCodes: ["item_unreadable"],
        sealedCodes: ["item_unreadable"]),
      Damage(
        name: "mode 0000", sealedOnly: false, unsealedCodes: ["item_unreadable"],
        sealedCodes: ["item_unreadable"]),
      Damage(
        name: "fifo", sealedOnly: false, unsealedCodes: ["not_a_regular_file"],
        sealedCodes: ["not_a_regular_file"]),
      Damage(
        name: "directory", sealedOnly: false, unsealedCodes: ["not_a_regular_file"],
        sealedCodes: ["not_a_regular_file"]),
      Damage(
        name: "symlink", sealedOnly: false, unsealedCodes: ["not_a_regular_file"],
        sealedCodes: ["not_a_regular_file"]),
      Damage(
        name: "older generation", sealedOnly: true, unsealedCodes: [],
        sealedCodes: ["item_unauthentic"]),
      Damage(
        name: "another store", sealedOnly: true, unsealedCodes: [],
        sealedCodes: ["item_unauthentic"]),
    ]
  }

  /// A store signed in with `token` and `keep`, sealed or not.
  final class Scene {
    let root: TemporaryStoreDirectory
    let binary: BinaryRunner
    let sealed: Bool
    var store: String { root.path + "/store" }
    var key: String { root.path + "/key" }
    var token: String { store + "/cache/items/token" }

    init(_ binary: BinaryRunner, sealed: Bool) throws {
      self.binary = binary
      self.sealed = sealed
      root = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-drops")
    }

    deinit { root.remove() }

    var seal: [String] { sealed ? ["--seal", "file:\(key)"] : [] }

    func payload(_ text: String) throws -> String {
      let path = root.path + "/payload-" + UUID().uuidString
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
      return path
    }

    func signIn(
      _ items: [String: String], store: String? = nil, json: Bool = false,
      launcher: [String] = []
    ) throws -> BinaryResult {
      var arguments = ["sign-in", "--store", store ?? self.store] + seal
      if json { arguments.append("--json") }
      for (name, text) in items.sorted(by: { $0.key < $1.key }) {
        arguments += ["--put", "\(name)=\(try payload(text))"]
      }
      return try binary.run(arguments, launcher: launcher)
    }

    func read(_ name: String, launcher: [String] = []) throws -> BinaryResult {
      try binary.run(
        ["read", "--store", store, "--max-age", "7d"] + seal + [name], launcher: launcher)
    }

    func verify(launcher: [String] = []) throws -> BinaryResult {
      try binary.run(
        ["status", "--store", store, "--max-age", "7d", "--verify", "--json"] + seal,
        launcher: launcher)
    }

    func damage(_ damage: Damage) throws {
      switch damage.name {
      case "bad checksum":
        let handle = try #require(FileHandle(forUpdatingAtPath: token))
        let end = try handle.seekToEnd()
        try handle.seek(toOffset: end - 1)
        let last = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: end - 1)
        try handle.write(contentsOf: [last ^ 0x01])
        try handle.close()
      case "truncated":
        var info = stat()
        try #require(lstat(token, &info) == 0)
        try #require(truncate(token, info.st_size - 1) == 0)
      case "sparse 1 TiB":
        try #require(truncate(token, 1 << 40) == 0)
      case "mode 0000":
        try #require(chmod(token, 0) == 0)
      case "fifo":
        try #require(unlink(token) == 0)
        try #require(mkfifo(token, 0o600) == 0)
      case "directory":
        try #require(unlink(token) == 0)
        try FileManager.default.createDirectory(
          atPath: token + "/inner", withIntermediateDirectories: true)
      case "symlink":
        // A link to a file that reads as a valid item: only the link is refused.
        let copy = root.path + "/token-copy"
        try FileManager.default.copyItem(atPath: token, toPath: copy)
        try #require(unlink(token) == 0)
        try FileManager.default.createSymbolicLink(atPath: token, withDestinationPath: copy)
      case "older generation":
        let old = try Data(contentsOf: URL(fileURLWithPath: token))
        let again = try signIn(["token": "new"])
        try #require(again.exitCode == 0, "\(again.standardError)")
        try old.write(to: URL(fileURLWithPath: token))
      case "another store":
        let other = root.path + "/other"
        let theirs = try signIn(["token": "theirs"], store: other)
        try #require(theirs.exitCode == 0, "\(theirs.standardError)")
        try Data(contentsOf: URL(fileURLWithPath: other + "/cache/items/token"))
          .write(to: URL(fileURLWithPath: token))
      default:
        Issue.record("unknown damage \(damage.name)")
      }
    }
  }

  /// Every damage, sealed and unsealed, with a sign-in that writes another item (`--put`) and
  /// one that writes none: the read before the sign-in refuses `token` with its code; the
  /// sign-in drops it, naming it with that code under `dropped_items` (and its key under
  /// `dropped`); then `token` is absent (exit 2, its entry gone from `items/`), `keep` still
  /// reads, and `status --verify` finds every item agreeing.
  @Test(
    .enabled(if: toolPath("setpriv") != nil, "setpriv is not installed"),
    arguments: Damage.all, [false, true])
  func aSignInDropsEveryItemAReadWouldRefuse(_ damage: Damage, sealed: Bool) throws {
    guard sealed || !damage.sealedOnly else { return }
    for put in [false, true] {
      let scene = try Scene(binary, sealed: sealed)
      let label = "\(damage), \(sealed ? "sealed" : "unsealed"), \(put ? "--put" : "no --put")"
      let first = try scene.signIn(["token": "the token", "keep": "kept"])
      try #require(first.exitCode == 0, "\(label): \(first.standardError)")
      try scene.damage(damage)
      let launcher = damage.launcher
      let codes = sealed ? damage.sealedCodes : damage.unsealedCodes
      let before = try scene.read("token", launcher: launcher)
      #expect(before.exitCode == 1, "\(label): read before: \(before.standardError)")
      #expect(
        codes.contains { before.standardError.contains($0) },
        "\(label): read before: \(before.standardError)")
      let signIn = try scene.signIn(put ? ["other": "other"] : [:], json: true, launcher: launcher)
      try #require(signIn.exitCode == 0, "\(label): sign-in: \(signIn.standardError)")
      let object = try signIn.jsonObject()
      #expect(object["dropped"] as? [String] == ["token"], "\(label): \(signIn.standardOutput)")
      let items = object["dropped_items"] as? [[String: Any]] ?? []
      #expect(items.count == 1, "\(label): \(signIn.standardOutput)")
      #expect(items.first?["key"] as? String == "token", "\(label): \(signIn.standardOutput)")
      #expect(
        codes.contains(items.first?["code"] as? String ?? "-"),
        "\(label): \(signIn.standardOutput)")
      let reason = items.first?["reason"] as? String ?? ""
      #expect(!reason.isEmpty && !reason.contains("left alone"), "\(label): \(reason)")
      var info = stat()
      #expect(lstat(scene.token, &info) != 0, "\(label): the item's entry is still there")
      let after = try scene.read("token", launcher: launcher)
      #expect(after.exitCode == 2, "\(label): read after: \(after.standardError)")
      let keep = try scene.read("keep", launcher: launcher)
      #expect(
        keep.exitCode == 0 && keep.standardOutput == "kept",
        "\(label): keep: \(keep.standardError)")
      let verify = try scene.verify(launcher: launcher)
      #expect(verify.exitCode == 0, "\(label): verify: \(verify.standardOutput)")
      if put {
        #expect(try scene.read("other", launcher: launcher).standardOutput == "other", "\(label)")
      }
    }
  }

  /// An item whose file has a second name (a hard link from outside the store, or from another
  /// item of it) is refused by a read with `insecure_store`, and its advice holds both ways:
  /// removing the other name makes it read again, untouched; a sign-in that does not write it
  /// again drops it, reports it (without the read's advice) and leaves the other name's bytes
  /// alone. Two items sharing one file are both dropped: neither name is the file's own.
  @Test(arguments: [false, true])
  func aHardLinkedItemReadsAgainWhenTheOtherNameGoesAndASignInDropsIt(_ sealed: Bool) throws {
    let scene = try Scene(binary, sealed: sealed)
    let label = sealed ? "sealed" : "unsealed"
    try #require(try scene.signIn(["token": "the token", "keep": "kept"]).exitCode == 0)
    let outside = scene.root.path + "/outside-name"
    try #require(link(scene.token, outside) == 0)
    let refused = try scene.read("token")
    #expect(refused.exitCode == 74, "\(label): \(refused.standardError)")
    #expect(
      refused.standardError.contains("insecure_store")
        && refused.standardError.contains("remove the other name")
        && refused.standardError.contains("drops it"),
      "\(label): \(refused.standardError)")
    // The lossless way: the other name removed, the item reads as it was.
    try #require(unlink(outside) == 0)
    let again = try scene.read("token")
    #expect(again.exitCode == 0 && again.standardOutput == "the token", "\(label)")
    // The sign-in's way: dropped and named; the other name keeps its bytes.
    try #require(link(scene.token, outside) == 0)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: outside))
    let signIn = try scene.signIn([:], json: true)
    try #require(signIn.exitCode == 0, "\(label): \(signIn.standardError)")
    let object = try signIn.jsonObject()
    #expect(object["dropped"] as? [String] == ["token"], "\(label): \(signIn.standardOutput)")
    let items = object["dropped_items"] as? [[String: Any]] ?? []
    #expect(items.first?["code"] as? String == "insecure_store", "\(label)")
    let reason = items.first?["reason"] as? String ?? ""
    #expect(
      reason.contains("2 names") && !reason.contains("drops it"), "\(label): \(reason)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes, "\(label)")
    #expect(try scene.read("token").exitCode == 2, "\(label)")
    #expect(try scene.read("keep").standardOutput == "kept", "\(label)")
    #expect(try scene.verify().exitCode == 0, "\(label)")
    // One file under two item names: both refused, both dropped, nothing else.
    #expect(try scene.signIn(["a": "pa", "v": "pv"]).exitCode == 0)
    let a = scene.store + "/cache/items/a"
    let v = scene.store + "/cache/items/v"
    try #require(unlink(v) == 0 && link(a, v) == 0)
    let both = try scene.signIn([:], json: true)
    try #require(both.exitCode == 0, "\(label): \(both.standardError)")
    #expect(
      try both.jsonObject()["dropped"] as? [String] == ["a", "v"],
      "\(label): \(both.standardOutput)")
    #expect(try scene.read("keep").standardOutput == "kept", "\(label)")
    #expect(try scene.verify().exitCode == 0, "\(label)")
  }

  /// The confirmation line names what it dropped and why, beside the wording of a sealing
  /// drop; a sign-in over sound items drops nothing and says nothing of it (and, unsealed, its
  /// JSON object has no `dropped` member, as before).
  @Test func theConfirmationNamesTheDroppedItemsAndWhy() throws {
    let scene = try Scene(binary, sealed: false)
    #expect(try scene.signIn(["token": "the token", "keep": "kept"]).exitCode == 0)
    let sound = try scene.signIn([:], json: true)
    #expect(sound.exitCode == 0 && !sound.standardOutput.contains("dropped"))
    try scene.damage(Damage.all[0])
    let line = try scene.signIn([:])
    #expect(line.exitCode == 0, "\(line.standardError)")
    #expect(
      line.standardOutput.hasSuffix(
        ", dropped 1 old item that a read would refuse: token (item_unreadable)\n"),
      "\(line.standardOutput)")
    let again = try scene.signIn([:])
    #expect(!again.standardOutput.contains("dropped"), "\(again.standardOutput)")
  }
}
