import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Outside test 2, F8: "the key is inside the store" is judged on the directories themselves
/// (device and inode of the key's directory and of each one above it, against the opened store
/// directory), not only on the spelling of the two paths. A bind mount, which shows the store
/// under another path, needs a mount namespace (`HostileStoreMatrixTests`, on the binary); here
/// the identity check is tried on its own with every spelling the path check also catches, so
/// either check alone refuses them.
@Suite struct KeyPlacementByIdentityTests {
  @Test func everySpellingOfADirectoryInsideTheStoreIsTheStoreByIdentity() throws {
    let parent = try TemporaryStoreDirectory(prefix: "key-identity")
    defer { parent.remove() }
    let store = parent.appending("store")
    for directory in [store + "/sub/deeper", parent.appending("elsewhere")] {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    #expect(symlink(store, parent.appending("alias")) == 0)
    #expect(symlink(store + "/sub", parent.appending("sub-alias")) == 0)
    let inside = [
      store + "/key", store + "/sub/key", store + "/sub/deeper/key", parent.appending("alias/key"),
      parent.appending("sub-alias/key"), parent.appending("elsewhere/../store/./key"),
      store + "/sub/../key", parent.appending("sub-alias/deeper/../key"),
    ]
    for path in inside {
      let provider = FileSealingKeyProvider(path: path)
      #expect(provider.keyDirectoryChainHolds(storeDirectory: store), "\(path)")
      #expect(
        provider.keyDirectoryChainHolds(storeDirectory: parent.appending("alias")),
        "\(path) against the store reached through a link")
      #expect(throws: SealingKeyError.self, "\(path)") {
        try provider.checkKeptOutside(storeDirectory: store)
      }
    }
    let outside = [
      parent.appending("key"), parent.appending("elsewhere/key"), parent.appending("store-key"),
      store + "/../key", "/key",
    ]
    for path in outside {
      let provider = FileSealingKeyProvider(path: path)
      #expect(!provider.keyDirectoryChainHolds(storeDirectory: store), "\(path)")
      try provider.checkKeptOutside(storeDirectory: store)
    }
    // A store that does not exist yet holds no key; a key directory that does not exist is
    // left to the load to report.
    #expect(
      !FileSealingKeyProvider(path: store + "/key").keyDirectoryChainHolds(
        storeDirectory: parent.appending("missing")))
    #expect(
      !FileSealingKeyProvider(path: parent.appending("missing/key")).keyDirectoryChainHolds(
        storeDirectory: store))
  }
}
