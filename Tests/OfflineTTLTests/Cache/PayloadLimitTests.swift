import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// The 1 GiB payload limit holds on every write path of the directory store, sealed or not: a
/// session commit and a sign-in that writes (the one-step sign-in stages through
/// `commitSignIn`, a sealed one through its own staging). An item one byte over is refused with
/// `write_failed (EFBIG)` before anything is written; the store keeps its items and generation.
/// The payload is `Data(count:)`, zero pages never touched: the check looks at its length only.
@Suite struct PayloadLimitTests {
  static let oversized = Data(count: DirectoryCacheStore.maximumPayloadLength + 1)

  @Test(arguments: [false, true])
  func everyWritePathRefusesAnItemOverTheLimit(sealed: Bool) throws {
    let fixture = try DirectoryGateFixture(prefix: "payload-limit", sealed: sealed)
    defer { fixture.root.remove() }
    try fixture.signIn(["token": "secret"])
    let gate = fixture.gate()

    let signIn = #expect(throws: OnlineSessionError.self) {
      try gate.beginOnlineSession(writing: [(CacheItemKey("big"), Self.oversized)])
    }
    #expect(signIn?.cacheError?.code == .writeFailed, "\(String(describing: signIn))")
    #expect(signIn?.cacheError?.errno == Errno.fileTooLarge.rawValue)

    let session = try gate.beginOnlineSession()
    let write = #expect(throws: OnlineSessionError.self) {
      try session.write(contentsOf: [(CacheItemKey("big"), Self.oversized)])
    }
    #expect(write?.cacheError?.code == .writeFailed, "\(String(describing: write))")
    #expect(write?.cacheError?.errno == Errno.fileTooLarge.rawValue)

    let reader = try #require(gate.openOffline().reader)
    #expect(try reader.keys() == ["token"], "nothing of the refused writes is stored")
    #expect(try reader.item(forKey: "token")?.payload == Data("secret".utf8))
  }
}

extension OfflineOpenResult {
  /// The reader when opened, else `nil`.
  fileprivate var reader: OfflineCacheReader? {
    if case .opened(let reader) = self { return reader }
    return nil
  }
}
