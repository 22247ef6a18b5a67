import Foundation
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What seals a store that was used without `--seal`, or re-seals one with another key, and what
/// refuses to, on the built binary.
@Suite struct SealingStoreEndToEndTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// A 32-byte key file at mode 0600 beside the store, made by a sealed sign-in elsewhere.
  func existingKey(_ scratch: SealedStoreEndToEndTests.Scratch) throws {
    try scratch.signIn(["token": "elsewhere"], store: scratch.root.path + "/elsewhere")
    #expect(FileManager.default.fileExists(atPath: scratch.key))
  }

  /// `mark reset --seal` keeps the items, so it never seals a store that was used without
  /// `--seal`: with an existing key it is `seal_mismatch`, exit 1, and nothing is written (the
  /// store still reads unsealed); only a sealed sign-in seals it.
  @Test func aSealedMarkResetNeverSealsAnUnsealedStore() throws {
    let s = try SealedStoreEndToEndTests.Scratch(binary)
    try s.signIn(["token": "plain"], seal: "")
    try existingKey(s)
    let before = try s.snapshot()
    let now = String(Int(Date().timeIntervalSince1970))
    let reset = try binary.run(
      ["mark", "reset", "--store", s.store, "--now", now, "--seal", "file:\(s.key)"])
    #expect(reset.exitCode == 1, "\(reset.standardError)")
    #expect(reset.standardOutput == "")
    #expect(reset.standardError.hasPrefix("error: seal_mismatch: "), "\(reset.standardError)")
    #expect(
      reset.standardError.contains("mark reset keeps the items and never seals them again"),
      "\(reset.standardError)")
    #expect(try s.snapshot() == before, "the store changed")
    let plain = try s.read(seal: "")
    #expect(plain.exitCode == 0 && plain.standardOutput == "plain", "\(plain.standardError)")
    let sealed = try s.read()
    #expect(sealed.exitCode == 1 && sealed.standardError.contains("seal_mismatch"))
    try s.signIn(["token": "sealed"])
    #expect(try s.read().standardOutput == "sealed")
  }

  /// A sign-in that seals a store used without `--seal`, or re-seals one with another key,
  /// drops the old items it does not write again (they do not authenticate with its key), and
  /// says so: the line counts them, `--json` lists their keys under `dropped` and each with its
  /// code and reason under `dropped_items` (present whenever `--seal` is given, absent without
  /// it when nothing is dropped). A sign-in with the store's own key drops nothing.
  @Test func aSealingSignInSaysWhichOldItemsItDropped() throws {
    let s = try SealedStoreEndToEndTests.Scratch(binary)
    try s.signIn(["token": "plain", "profile": "plain", "other": "plain"], seal: "")
    let sealing = try s.signIn(["token": "sealed"])
    #expect(
      sealing.standardOutput.hasSuffix(
        ", dropped 2 old items that this key cannot authenticate\n"),
      "\(sealing.standardOutput)")
    #expect(try s.read().standardOutput == "sealed")
    let same = try binary.run(["sign-in", "--store", s.store, "--seal", "file:\(s.key)", "--json"])
    #expect(same.exitCode == 0, "\(same.standardError)")
    #expect(
      same.standardOutput.hasSuffix(#""written":[],"dropped":[],"dropped_items":[]}"# + "\n"),
      "\(same.standardOutput)")
    let same2 = try binary.run(["sign-in", "--store", s.store, "--seal", "file:\(s.key)"])
    #expect(!same2.standardOutput.contains("dropped"), "\(same2.standardOutput)")
    // Re-sealed with another key: the one item the store held is dropped, by name.
    let otherKey = s.root.path + "/other.key"
    let other = try binary.run([
      "sign-in", "--store", s.store, "--seal", "file:\(otherKey)", "--json",
      "--put", "profile=\(try s.payload("again"))",
    ])
    #expect(other.exitCode == 0, "\(other.standardError)")
    #expect(
      other.standardOutput.hasSuffix(
        #""written":["profile"],"dropped":["token"],"dropped_items":[{"key":"token","#
          + #""code":"item_unauthentic","reason":"item token does not authenticate with this"#
          + #" key"}]}"# + "\n"),
      "\(other.standardOutput)")
    let unsealed = try binary.run(["sign-in", "--store", s.store + "-plain", "--json"])
    #expect(unsealed.exitCode == 0 && !unsealed.standardOutput.contains("dropped"))
  }
}
