import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// A sign-in refused under the writer lock says what it wrote, never "nothing was written"
/// after it made something: a sealed sign-in whose key was missing made the key first (and a
/// keyring key's lock file, in a lock directory that may be the store directory), and a first
/// commit made the store directory, `cache/` and its lock before the item sizes are known.
@Suite struct RefusalWrittenClaimTests {
  static let key = CacheItemKey(stringLiteral: "token")

  /// An item one byte over the 1 GiB maximum (never touched: refused before it is read).
  static var oversized: CacheChanges {
    var changes = CacheChanges()
    changes.write(
      key, Data(count: Int(CacheFormat.maximumPayloadLength) + 1),
      writtenAt: WallClockInstant(nanosecondsSinceEpoch: 1))
    return changes
  }

  func refusal(_ store: DirectoryCacheStore, _ changes: CacheChanges) -> StoreError? {
    do {
      _ = try store.commitSignIn(changes, storedGeneration: { nil }, commitPoint: { true })
      return nil
    } catch {
      return error
    }
  }

  /// A sealed sign-in into a missing store directory, its key file missing too, refused for an
  /// item over 1 GiB: the message names the key file it made, which exists; with the key made
  /// before, the message says the key was not made. Neither claims that nothing was written.
  @Test func aSealedSignInThatMadeItsKeySaysSo() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-written-claim")
    defer { scratch.remove() }
    let keyPath = scratch.appending("store.key")
    let store = DirectoryCacheStore(
      atPath: scratch.appending("store"), sealing: FileSealingKeyProvider(path: keyPath))
    let first = try #require(refusal(store, Self.oversized))
    #expect(first.code == .writeFailed, "\(first)")
    #expect(FileManager.default.fileExists(atPath: keyPath), "the key was made")
    #expect(first.message.contains("made its missing sealing key"), "\(first.message)")
    #expect(first.message.contains(keyPath), "\(first.message)")
    #expect(!first.message.contains("nothing was written"), "\(first.message)")
    #expect(first.message.contains("no item was written"), "\(first.message)")
    let key = try Data(contentsOf: URL(fileURLWithPath: keyPath))
    let again = try #require(refusal(store, Self.oversized))
    #expect(!again.message.contains("sealing key"), "\(again.message)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: keyPath)) == key)
  }

  /// The refusals under the lock that claimed nothing was written: `items/` open to others
  /// (`insecure_store`) after the key was made says the key was made; with the key there
  /// already, nothing at all changes and the message says so.
  @Test func anInsecureStoreRefusedAfterTheKeyWasMadeSaysSo() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-written-claim")
    defer { scratch.remove() }
    let path = scratch.appending("store")
    try FileManager.default.createDirectory(
      atPath: path + "/cache/items", withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    #expect(chmod(path + "/cache/items", 0o777) == 0)
    let keyPath = scratch.appending("store.key")
    let store = DirectoryCacheStore(atPath: path, sealing: FileSealingKeyProvider(path: keyPath))
    var changes = CacheChanges()
    changes.write(Self.key, Data("x".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 1))
    let first = try #require(refusal(store, changes))
    #expect(first.code == .insecureStore, "\(first)")
    #expect(FileManager.default.fileExists(atPath: keyPath))
    #expect(first.message.contains("nothing else was written"), "\(first.message)")
    #expect(first.message.contains(keyPath), "\(first.message)")
    let before = try StoreBytes(scratch.path)
    let again = try #require(refusal(store, changes))
    #expect(again.code == .insecureStore, "\(again)")
    #expect(again.message.contains("; nothing was written"), "\(again.message)")
    #expect(try StoreBytes(scratch.path) == before, "nothing was written")
  }

  /// Unsealed, a first commit of an item over 1 GiB made the store directory, `cache/` and its
  /// lock: the message claims no item and no mark, which is true.
  @Test func anOversizedFirstCommitClaimsOnlyWhatItDidNotWrite() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-written-claim")
    defer { scratch.remove() }
    let path = scratch.appending("store")
    let error = try #require(refusal(DirectoryCacheStore(atPath: path), Self.oversized))
    #expect(error.code == .writeFailed)
    #expect(!error.message.contains("nothing was written"), "\(error.message)")
    #expect(error.message.contains("no item was written"), "\(error.message)")
    #expect(FileManager.default.fileExists(atPath: path + "/cache"), "the store was made")
    let items = try? FileManager.default.contentsOfDirectory(atPath: path + "/cache/items")
    #expect(items?.isEmpty ?? true, "\(items ?? [])")
    #expect(!FileManager.default.fileExists(atPath: path + "/" + FileClockMarkStore.recordFileName))
  }
}
