import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// Every entry point that writes items takes an array literal whose keys are string literals,
/// in place: `[("token", data)]` (this file does not compile where one does not), and writes
/// what it names. A sequence that is not an array still goes to the sequence variants.
@Suite struct ArrayLiteralWritingTests {
  /// The payload read back for `key` through a fresh offline reader.
  static func read(_ gate: OfflineAccessGate, _ key: CacheItemKey) throws -> String? {
    let opened = gate.openOffline()
    guard case .opened(let reader) = opened else {
      Issue.record("refused after a sign-in: \(opened)")
      return nil
    }
    return try reader.item(forKey: key).map { String(decoding: $0.payload, as: UTF8.self) }
  }

  @Test func theSynchronousEntryPointsTakeALiteral() throws {
    let fixture = try DirectoryGateFixture(prefix: "literal-sync")
    defer { fixture.root.remove() }
    let gate = fixture.gate()
    let session = try gate.beginOnlineSession(writing: [("a", Data("1".utf8))])
    #expect(try Self.read(gate, "a") == "1")
    try session.write(contentsOf: [("b", Data("2".utf8)), ("a", Data("3".utf8))])
    #expect(try Self.read(gate, "a") == "3")
    #expect(try Self.read(gate, "b") == "2")
    // Not an array: the sequence variants.
    try gate.beginOnlineSession(
      writing: ["d", "e"].lazy.map { (CacheItemKey(stringLiteral: $0), Data($0.utf8)) })
    #expect(try Self.read(gate, "e") == "e")
    try gate.beginOnlineSession(writing: [])
    #expect(try Self.read(gate, "d") == "d")
    // Last: its items are stamped later than the wall clock reads.
    let anchored = try gate.beginOnlineSession(
      serverTime: GateFixture.start.saturatingAdvanced(by: .seconds(10)), uncertainty: .seconds(1),
      writing: [("c", Data("4".utf8))])
    #expect(try Self.read(gate, "c") == "4")
    // Stamped `serverTime − uncertainty − 2 s`.
    #expect(anchored.signInWrittenAt == GateFixture.start.saturatingAdvanced(by: .seconds(7)))
  }

  @Test func theAsynchronousEntryPointsTakeALiteral() async throws {
    let fixture = try DirectoryGateFixture(prefix: "literal-async")
    defer { fixture.root.remove() }
    let gate = fixture.gate()
    let session = try await gate.beginOnlineSessionAsync(writing: [("a", Data("1".utf8))])
    #expect(try Self.read(gate, "a") == "1")
    try await session.writeAsync(contentsOf: [("b", Data("2".utf8))])
    #expect(try Self.read(gate, "b") == "2")
    try await gate.beginOnlineSessionAsync(
      serverTime: GateFixture.start.saturatingAdvanced(by: .seconds(10)), uncertainty: .seconds(1),
      writing: [("c", Data("3".utf8))])
    #expect(try Self.read(gate, "c") == "3")
  }
}
