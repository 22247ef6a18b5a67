import OfflineTTL
import Testing

@testable import OfflineTTLCommandLine

/// The keyring application id of a command-line store: the path itself when it is UTF-8 (the
/// ids earlier versions made), a percent-encoded spelling under another prefix when it is not.
@Suite struct StoreBackendTests {
  static func escaped(_ bytes: [UInt8]) -> String {
    FileSystemName.path(fromBytes: bytes)
  }

  @Test func aUTF8PathIsTheIdAsBefore() {
    #expect(
      StoreBackend.applicationID(storePath: "/home/me/a b/é") == "offline-ttl-cli:/home/me/a b/é")
  }

  @Test func aPathThatIsNotUTF8GetsItsBytesPercentEncodedUnderItsOwnPrefix() {
    let path = Self.escaped(Array("/t/w".utf8) + [0xFF] + Array("x%/é s".utf8))
    #expect(
      StoreBackend.applicationID(storePath: path)
        == "offline-ttl-cli-bytes:/t/w%FFx%25/%C3%A9%20s")
    // Two paths with one U+FFFD spelling are two ids; none holds NUL.
    let other = Self.escaped(Array("/t/w".utf8) + [0xFE] + Array("x%/é s".utf8))
    #expect(
      StoreBackend.applicationID(storePath: other) != StoreBackend.applicationID(storePath: path))
    #expect(!StoreBackend.applicationID(storePath: path).utf8.contains(0))
  }
}
