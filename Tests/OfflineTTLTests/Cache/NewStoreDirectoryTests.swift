import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

/// A sign-in makes a new store only in a directory of its own: what the library itself makes
/// there before `cache/` (the clock-mark files, a Secret Service lock file when the lock
/// directory is the store directory) does not make it someone else's; anything else does.
@Suite struct NewStoreDirectoryTests {
  static let item = CacheItemKey(stringLiteral: "token")

  /// Makes `store` holding one empty file `name` (mode 0600), then commits one item.
  static func commit(besides name: String, in scratch: TemporaryStoreDirectory) throws -> (
    store: String, result: Result<Void, StoreError>
  ) {
    let store = scratch.appending("store")
    try FileManager.default.createDirectory(
      atPath: store, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    #expect(
      FileManager.default.createFile(
        atPath: store + "/" + name, contents: Data(), attributes: [.posixPermissions: 0o600]))
    var changes = CacheChanges()
    changes.write(item, Data("x".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 1))
    let result = Result { () throws(StoreError) in
      try DirectoryCacheStore(atPath: store).commit(changes)
    }
    return (store, result)
  }

  /// The names the library makes in a store directory before its `cache/`, one at a time: the
  /// store is made beside it, and the file is left as it was. The keyring's lock file of the
  /// command-line tool (`sign-in --seal secret-service`) was refused before.
  @Test(arguments: [
    "clock-mark", "clock-mark.lock", "clock-mark.tmp",
    "secret-service.com.example.app.marks.lock", "secret-service.com.example.app.items.lock",
    "secret-service.com.example.app.sealing-key.lock", "secret-service.com.example.app.lock",
  ])
  func aFileTheLibraryMakesBeforeTheStoreLetsTheStoreBeMade(_ name: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-new-store")
    defer { scratch.remove() }
    let (store, result) = try Self.commit(besides: name, in: scratch)
    #expect(throws: Never.self, "\(name)") { try result.get() }
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        == ["cache", name].sorted())
    #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/" + name)).isEmpty)
    #expect(
      try DirectoryCacheStore(atPath: store).item(forKey: Self.item)?.payload == Data("x".utf8))
  }

  /// The keyring lock file's exact name for the command-line tool's application id of this
  /// very directory.
  @Test func theCommandLineToolsKeyringLockFileLetsTheStoreBeMade() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-new-store")
    defer { scratch.remove() }
    let name = KeyringLockFileName.name(
      applicationID: "offline-ttl-cli:" + scratch.appending("store"), kind: "sealing-key")
    let (_, result) = try Self.commit(besides: name, in: scratch)
    #expect(throws: Never.self, "\(name)") { try result.get() }
  }

  /// Names that only look like the library's: refused (`store_unusable`, naming the entry) and
  /// nothing written.
  @Test(arguments: [
    "secret-service..lock", "secret-service.a b.lock", "secret-service.a.lock~",
    "secret-service.a.lock.tmp", "clock-mark.bak", "cache.tmp", "key", ".clock-mark.lock",
  ])
  func aNameTheLibraryNeverMakesIsRefused(_ name: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-new-store")
    defer { scratch.remove() }
    let (store, result) = try Self.commit(besides: name, in: scratch)
    let error = #expect(throws: StoreError.self, "\(name)") { try result.get() }
    #expect(error?.code == .storeUnusable)
    #expect(
      error?.message.contains("is not a store directory") == true, "\(String(describing: error))")
    #expect(error?.message.contains(name.debugDescription) == true, "\(String(describing: error))")
    #expect(try FileManager.default.contentsOfDirectory(atPath: store) == [name])
  }

  /// A sealed sign-in pointed at a directory that is not a store's is refused before its key is
  /// looked up: no key file is made for it (the same order keeps a keyring key, and the lock file
  /// its lookup makes, from being made for a refused sign-in), and the directory is unchanged.
  /// A sign-in into the store directory beside it then makes the key.
  @Test func aSealedSignInIntoAnotherDirectoryMakesNoKey() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-new-store")
    defer { scratch.remove() }
    let foreign = scratch.appending("foreign")
    try FileManager.default.createDirectory(
      atPath: foreign, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    #expect(FileManager.default.createFile(atPath: foreign + "/notes", contents: Data("x".utf8)))
    let key = scratch.appending("key")
    func gate(_ store: String) throws -> OfflineAccessGate {
      let provider = FileSealingKeyProvider(path: key)
      return OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: store, sealing: provider),
        marks: FileClockMarkStore(atPath: store, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: ManualWallClock(WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)))
    }
    let refused = try gate(foreign)
    let error = #expect(throws: OnlineSessionError.self) {
      try refused.beginOnlineSession(writing: [(Self.item, Data("secret".utf8))])
    }
    #expect(error?.cacheError?.code == .storeUnusable, "\(String(describing: error))")
    #expect(!FileManager.default.fileExists(atPath: key), "a key was made for a refused sign-in")
    #expect(try FileManager.default.contentsOfDirectory(atPath: foreign) == ["notes"])
    let store = scratch.appending("store")
    try gate(store).beginOnlineSession(writing: [(Self.item, Data("secret".utf8))])
    #expect(FileManager.default.fileExists(atPath: key))
  }

  /// A sealed sign-in into an existing directory with no `cache/` yet whose key file lies inside
  /// it is refused as what it is, `key_inside_store`, not as a foreign directory (the key file
  /// is an entry no store makes), and nothing is written. Members: the key beside nothing else,
  /// in a subdirectory, beside the clock-mark files, beside a foreign entry, named through `..`,
  /// and not made yet.
  @Test(
    arguments: [
      ("key", "key"), ("keys/store.key", "keys/store.key"), ("key", "clock-mark.lock"),
      ("key", "notes"), ("sub/../key", "key"), ("missing.key", nil),
    ] as [(String, String?)])
  func aKeyInsideAnExistingDirectoryIsRefusedAsInsideTheStore(
    _ keyPath: String, _ existing: String?
  ) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-new-store")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    try FileManager.default.createDirectory(
      atPath: store + (keyPath.hasPrefix("sub/") ? "/sub" : ""),
      withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    if let existing {
      let path = store + "/" + existing
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      #expect(
        FileManager.default.createFile(
          atPath: path, contents: Data(existing == "notes" ? [] : Array(repeating: 7, count: 32)),
          attributes: [.posixPermissions: 0o600]))
    }
    if existing == "clock-mark.lock" || existing == "notes" {
      // The key itself too, beside that entry.
      #expect(
        FileManager.default.createFile(
          atPath: store + "/key", contents: Data(repeating: 7, count: 32),
          attributes: [.posixPermissions: 0o600]))
    }
    let before = try StoreBytes(store)
    let provider = FileSealingKeyProvider(path: store + "/" + keyPath)
    var changes = CacheChanges()
    changes.write(Self.item, Data("x".utf8), writtenAt: WallClockInstant(nanosecondsSinceEpoch: 1))
    let error = #expect(throws: StoreError.self, "\(keyPath)") {
      try DirectoryCacheStore(atPath: store, sealing: provider).commitSignIn(
        changes, storedGeneration: { nil }, commitPoint: { true })
    }
    #expect(error?.code == .keyUnavailable, "\(keyPath): \(String(describing: error))")
    #expect(
      error?.message.contains("key_inside_store") == true,
      "\(keyPath): \(String(describing: error))")
    #expect(try StoreBytes(store) == before, "\(keyPath): nothing written")
  }
}
