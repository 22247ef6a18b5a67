import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SignInReport) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// The sign-in judges every item it carries as a read judges it, and drops the ones a read
/// would refuse: through the gate, sealed and unsealed, with and without items of its own.
@Suite struct DirectoryCacheStoreCarriedItemsTests {
  typealias Fixture = SealedStoreTests.Fixture

  /// The damages a read refuses, as `(name, sealed stores only)`: an unsealed item is bound to
  /// no generation or store, so a copy from elsewhere reads there.
  /// The codes a read refuses each damage with, unsealed and sealed.
  static func codes(_ name: String, sealed: Bool) -> Set<StoreError.Code> {
    switch name {
    case "fifo", "directory", "symlink": return [.notARegularFile]
    case "sparse 1 TiB": return [.itemUnreadable]
    case "truncated": return sealed ? [.itemUnauthentic, .itemUnreadable] : [.itemUnreadable]
    default: return sealed ? [.itemUnauthentic] : [.itemUnreadable]
    }
  }

  static let damages: [(String, Bool)] = [
    ("bad checksum", false), ("truncated", false), ("sparse 1 TiB", false), ("fifo", false),
    ("directory", false), ("symlink", false), ("older generation", true),
    ("another store", true),
  ]

  static func damage(_ name: String, _ fixture: Fixture, sealed: Bool) throws {
    let token = fixture.store + "/cache/items/token"
    switch name {
    case "bad checksum":
      var bytes = try Data(contentsOf: URL(fileURLWithPath: token))
      bytes[bytes.count - 1] ^= 0x01
      // In place, as a failing disk does: the directory's stamp does not change.
      let handle = try #require(FileHandle(forUpdatingAtPath: token))
      try handle.write(contentsOf: bytes)
      try handle.close()
    case "truncated":
      var info = stat()
      try #require(lstat(token, &info) == 0)
      try #require(truncate(token, info.st_size - 1) == 0)
    case "sparse 1 TiB":
      try #require(truncate(token, 1 << 40) == 0)
    case "fifo":
      try #require(unlink(token) == 0)
      try #require(mkfifo(token, 0o600) == 0)
    case "directory":
      try #require(unlink(token) == 0)
      try FileManager.default.createDirectory(
        atPath: token + "/inner", withIntermediateDirectories: true)
    case "symlink":
      let copy = fixture.root.path + "/token-copy"
      try FileManager.default.copyItem(atPath: token, toPath: copy)
      try #require(unlink(token) == 0)
      try FileManager.default.createSymbolicLink(atPath: token, withDestinationPath: copy)
    case "older generation":
      let old = try Data(contentsOf: URL(fileURLWithPath: token))
      try fixture.signIn(["token": "new"], gate: try fixture.gate(sealed: sealed))
      try old.write(to: URL(fileURLWithPath: token))
    case "another store":
      let other = fixture.root.path + "/other"
      try fixture.signIn(["token": "theirs"], gate: try fixture.gate(store: other))
      try Data(contentsOf: URL(fileURLWithPath: other + "/cache/items/token"))
        .write(to: URL(fileURLWithPath: token))
    default:
      Issue.record("unknown damage \(name)")
    }
  }

  /// Signs in through `gate` writing `items`, under a report; returns the report.
  static func signIn(_ gate: OfflineAccessGate, _ items: [String: String]) throws
    -> SignInReport
  {
    let report = SignInReport()
    let writing = items.map { (try! CacheItemKey($0.key), Data($0.value.utf8)) }
    let begun = report.collecting {
      Result { () throws(OnlineSessionError) in try gate.beginOnlineSession(writing: writing) }
    }
    try begun.get().close()
    return report
  }

  /// A damaged `token` is refused by a read; a sign-in (writing nothing, or another item) drops
  /// it and reports it; then `token` is absent, `keep` reads, and the verification of every
  /// item agrees. A sign-in over the same store with nothing damaged drops nothing.
  @Test(arguments: damages, [false, true])
  func aSignInDropsEveryCarriedItemAReadWouldRefuse(_ damage: (String, Bool), sealed: Bool)
    throws
  {
    guard sealed || !damage.1 else { return }
    for put in [false, true] {
      let fixture = try Fixture()
      defer { fixture.root.remove() }
      let label = "\(damage.0), \(sealed ? "sealed" : "unsealed"), put \(put)"
      let gate = try fixture.gate(sealed: sealed)
      try fixture.signIn(["token": "the token", "keep": "kept"], gate: gate)
      try Self.damage(damage.0, fixture, sealed: sealed)
      #expect(try fixture.refusal("token", gate: gate) != nil, "\(label): read before")
      let report = try Self.signIn(gate, put ? ["other": "other"] : [:])
      #expect(report.droppedKeys == ["token"], "\(label)")
      let dropped = report.dropped.first
      #expect(
        dropped.map { Self.codes(damage.0, sealed: sealed).contains($0.code) } == true,
        "\(label): \(report.dropped)")
      #expect(dropped?.unauthenticatedByKey == false, "\(label)")
      #expect(dropped?.reason.contains("left alone") == false, "\(label)")
      guard case .opened(let reader) = gate.openOffline() else {
        Issue.record("\(label): refused after the sign-in")
        continue
      }
      #expect(try reader.item(forKey: CacheItemKey("token")) == nil, "\(label)")
      #expect(
        try reader.item(forKey: CacheItemKey("keep"))?.payload == Data("kept".utf8), "\(label)")
      let verification = gate.verifyItems(against: gate.checkEligibility())
      #expect(verification.disagreeing.isEmpty, "\(label): \(verification.disagreeing)")
      #expect(verification.checked == (put ? 2 : 1), "\(label)")
      let again = try Self.signIn(gate, [:])
      #expect(again.droppedKeys.isEmpty, "\(label)")
    }
  }
}
