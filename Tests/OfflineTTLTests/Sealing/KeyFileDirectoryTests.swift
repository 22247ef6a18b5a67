import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Where a key file may be: in a directory that only its user may write (whoever may write the
/// directory can replace the key), and under one name only (a second name is a copy that goes
/// wherever that name goes, a store directory included). Every other place is a typed refusal,
/// for the offline load and for the online path that would create the key, and the file kinds
/// that cannot be opened (a socket) are refused like those that can (a FIFO).
@Suite struct KeyFileDirectoryTests {
  let root: TemporaryStoreDirectory

  init() throws {
    root = try TemporaryStoreDirectory(prefix: "offline-ttl-key-directory")
  }

  /// Makes `name` under the root with `mode` (set with chmod, whatever the umask).
  func directory(_ name: String, mode: mode_t) throws -> String {
    let path = root.appending(name)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect(chmod(path, mode) == 0)
    return path
  }

  /// Writes a valid key (32 bytes, mode 0600) at `path`.
  func writeKey(_ path: String) throws {
    #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 32)))
    #expect(chmod(path, 0o600) == 0)
  }

  func failure(_ body: () throws -> SealingKey) -> SealingKeyError? {
    do {
      _ = try body()
      return nil
    } catch {
      return error as? SealingKeyError
    }
  }

  @Test(arguments: [0o777, 0o1777, 0o770, 0o720, 0o702, 0o1770])
  func aKeyInADirectoryOthersMayWriteIsRefused(_ mode: Int) throws {
    defer { root.remove() }
    let keys = try directory("keys", mode: mode_t(mode))
    try writeKey(keys + "/store.key")
    let provider = FileSealingKeyProvider(path: keys + "/store.key")
    let refused = failure { try provider.loadKey() }
    #expect(
      refused?.code == .insecureMode, "\(String(mode, radix: 8)): \(String(describing: refused))")
    #expect(refused?.reason.contains("directory") == true)
    // Nor is one created there by the online path.
    let fresh = FileSealingKeyProvider(path: keys + "/new.key")
    #expect(failure { try fresh.loadOrCreateKey() }?.code == .insecureMode)
    #expect(!FileManager.default.fileExists(atPath: keys + "/new.key"))
  }

  @Test(arguments: [0o700, 0o755, 0o750, 0o1700])
  func aKeyInADirectoryOnlyItsUserMayWriteLoads(_ mode: Int) throws {
    defer { root.remove() }
    let keys = try directory("keys", mode: mode_t(mode))
    let provider = FileSealingKeyProvider(path: keys + "/store.key")
    let created = try provider.loadOrCreateKey()
    #expect(try FileSealingKeyProvider(path: keys + "/store.key").loadKey().bytes == created.bytes)
  }

  @Test func aKeyInADirectoryOfAnotherUserIsRefused() throws {
    defer { root.remove() }
    let path: String
    if geteuid() == 0 {
      let keys = try directory("keys", mode: 0o755)
      try writeKey(keys + "/store.key")
      #expect(chown(keys, 65_534, 65_534) == 0)
      path = keys + "/store.key"
    } else {
      // The root directory is root's: a key named there is in another user's directory.
      path = "/offline-ttl-no-such-key-\(UUID().uuidString)"
    }
    let refused = failure { try FileSealingKeyProvider(path: path).loadKey() }
    #expect(refused?.code == .wrongOwner, "\(String(describing: refused))")
    #expect(refused?.reason.contains("directory") == true)
  }

  /// A second name of the key, inside the store (where copying the store copies the key) or
  /// anywhere else, is refused; removing it makes the key usable again.
  @Test(arguments: ["store/key-copy", "elsewhere-copy"])
  func aKeyWithASecondNameIsRefused(_ secondName: String) throws {
    defer { root.remove() }
    _ = try directory("keys", mode: 0o700)
    _ = try directory("store", mode: 0o700)
    let key = root.appending("keys/store.key")
    try writeKey(key)
    #expect(link(key, root.appending(secondName)) == 0)
    let provider = FileSealingKeyProvider(path: key)
    let refused = failure { try provider.loadKey() }
    #expect(refused?.code == .hardLinked, "\(String(describing: refused))")
    #expect(failure { try provider.loadOrCreateKey() }?.code == .hardLinked)
    #expect(
      failure { try provider.loadKey(forStoreAt: root.appending("store")) }?.code == .hardLinked)
    #expect(unlink(root.appending(secondName)) == 0)
    #expect(failure { try provider.loadKey() } == nil)
  }

  /// A socket cannot be opened at all (`ENXIO`); it is refused as what it is, like a FIFO.
  @Test func aSocketAtTheKeyPathIsNotARegularFile() throws {
    defer { root.remove() }
    let keys = try directory("keys", mode: 0o700)
    let path = keys + "/store.key"
    try UnixSocket.place(at: path)
    let refused = failure { try FileSealingKeyProvider(path: path).loadKey() }
    #expect(refused?.code == .notRegularFile, "\(String(describing: refused))")
    #expect(refused?.reason.contains("a socket") == true)
  }
}
