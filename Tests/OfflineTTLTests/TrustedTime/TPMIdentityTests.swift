import OfflineTTL
import Testing

@Suite struct TPMIdentityTests {
  @Test func bytesRoundTripAndPrintAsHex() throws {
    let bytes = (0..<32).map { UInt8($0 * 7 & 0xFF) }
    let identity = try #require(TPMIdentity(bytes: bytes))
    #expect(identity.bytes == bytes)
    #expect(identity.description.count == 64)
    #expect(identity.description.hasPrefix("00070e151c232a31"))
    #expect(identity != .none)
    #expect(Set([identity, identity, .none]).count == 2)
  }

  @Test(arguments: [0, 31, 33, 34])
  func otherLengthsAreRejected(count: Int) {
    #expect(TPMIdentity(bytes: [UInt8](repeating: 1, count: count)) == nil)
  }
}
