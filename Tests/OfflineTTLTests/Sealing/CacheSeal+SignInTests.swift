import Testing

@testable import OfflineTTL

/// A staged sealed index is bound to its sign-in: its header MAC covers the sign-in id (not
/// stored in the index), so it verifies only for a reader that expects that id; the live index
/// (no id) verifies only without one.
@Suite struct CacheSealSignInTests {
  static let keys = SealKeys.of(try! SealingKey(bytes: [UInt8](repeating: 7, count: 32)))
  static let index = CacheSeal.Index(
    entries: [
      "token": CacheSeal.Entry(writtenAt: WallClockInstant(nanosecondsSinceEpoch: 5), generation: 2)
    ],
    generation: 2, storeID: [1, 2, 3, 4, 5, 6, 7, 8])

  @Test func aStagedIndexVerifiesOnlyForItsOwnSignIn() {
    let mine = SignInID(high: 1, low: 2)
    let other = SignInID(high: 1, low: 3)
    let staged = CacheSeal.encodeIndex(Self.index, keys: Self.keys, signIn: mine)
    let header = Array(staged[0..<CacheSeal.indexHeaderSize])
    #expect((try? CacheSeal.decodeIndexHeader(header, keys: Self.keys, signIn: mine).get()) != nil)
    for expected in [other, nil] {
      guard
        case .failure(.unauthentic) = CacheSeal.decodeIndexHeader(
          header, keys: Self.keys, signIn: expected)
      else {
        Issue.record("a staged index verified for \(String(describing: expected))")
        continue
      }
    }
    let live = CacheSeal.encodeIndex(Self.index, keys: Self.keys)
    let liveHeader = Array(live[0..<CacheSeal.indexHeaderSize])
    #expect((try? CacheSeal.decodeIndexHeader(liveHeader, keys: Self.keys).get()) != nil)
    #expect(
      (try? CacheSeal.decodeIndexHeader(liveHeader, keys: Self.keys, signIn: mine).get()) == nil)
    // The same size and the same bytes but the header MAC: the id is not stored.
    #expect(staged.count == live.count)
    #expect(Array(staged[0..<96]) == Array(live[0..<96]))
  }
}
