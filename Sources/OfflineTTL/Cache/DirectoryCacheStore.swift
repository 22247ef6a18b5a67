import Foundation

/// The embedded default ``CacheItemStore``: one file per item in a private directory, beside the
/// clock mark in the same store directory.
///
/// Layout inside the store directory (the mark store's own files, such as `clock-mark`, sit
/// beside `cache/` and can never clash with a key):
/// ```
/// cache/            0700
///   lock            flock(2) writer lock
///   index           count, oldest and newest writtenAt (a fixed 72-byte header), then every
///                   key with its writtenAt; maintained by the writer under the lock
///   pending         present while a commit is in progress (or crashed): the index is then rebuilt
///   tmp/            new files before they are renamed into place
///   items/<key>     0600; header with the exact writtenAt, length and CRC-32, then the payload
/// ```
/// The byte layouts are in `docs/cache-format.md`.
///
/// - ``summary()`` reads the index header and makes two `stat` calls: its cost does not depend on
///   the number of items. A missing index, a `pending` marker, or an items directory changed
///   since the index was written (another tool added or removed files) makes it rebuild the
///   index from the item headers, under the lock; no item is changed by a rebuild.
/// - ``commit(_:onlyIf:)`` writes every new file, then makes them durable with *one*
///   `syncfs(2)` (Linux; one `fsync` per file elsewhere), renames them into place, syncs the items
///   directory once and commits the index: a constant number of syncs per commit, not one per item.
/// - No path follows a symbolic link: every component the store opens is opened `O_NOFOLLOW`;
///   an item that is a link, not a regular file, truncated or failing its checksum is
///   `item_unreadable` (``StoreError``) and is left where it is.
public struct DirectoryCacheStore: CacheItemStore {
  /// The store directory (shared with `FileClockMarkStore`).
  public let directory: String
  /// The sealing key's provider when the store is sealed, else `nil`.
  public let sealing: (any SealingKeyProvider)?
  let files: CacheFiles

  static let cacheName = "cache"
  static let itemsName = "items"
  static let tmpName = "tmp"
  static let lockName = "lock"
  static let indexName = "index"
  static let pendingName = "pending"

  /// Creates a store over a directory given by path; nothing is created until the first commit
  /// (the same family as ``FileClockMarkStore/init(atPath:)``; a file URL works too).
  ///
  /// - Parameter path: The store directory's path. Its parents may be symbolic links; the
  ///   directory itself and everything the store creates inside it are never followed as links.
  /// - Complexity: O(1); no I/O.
  public init(atPath path: String) {
    self.init(atPath: path, sealing: nil)
  }

  /// Creates a store over a directory, sealed with the key of `sealing` when it is given;
  /// nothing is created until the first commit.
  ///
  /// A sealed store encrypts every payload (XChaCha20-Poly1305) bound to the store, the key,
  /// `writtenAt` and the generation it was committed under, and MACs its index, bound to the
  /// clock mark's generation: pair it with a ``FileClockMarkStore`` over the same directory and
  /// provider. It refuses what does not authenticate (`item_unauthentic`, `index_unauthentic`),
  /// an unsealed or differently sealed store (`seal_mismatch`), and leaves it in place; an
  /// unsealed store refuses a sealed one (`key_required`). Only the online path
  /// (``commitSignIn(_:storedGeneration:commitPoint:)`` and ``commit(_:onlyIf:)``) may create a
  /// missing key, re-seal the index, and drop item files that no longer authenticate. A sealed
  /// sign-in stages its items sealed for the generation it commits (see
  /// `docs/sign-in-protocol.md`). The rule: <doc:Rules#Sealed-stores>; layouts:
  /// `docs/cache-format.md`.
  ///
  /// - Parameters:
  ///   - path: The store directory's path.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  /// - Complexity: O(1); no I/O.
  public init(atPath path: String, sealing: (any SealingKeyProvider)?) {
    self.directory = path
    self.sealing = sealing
    self.files = CacheFiles(sys: Syscalls())
  }

  /// Creates a store whose every system call first consults a fault plan (for tests).
  ///
  /// - Parameters:
  ///   - path: The store directory's path.
  ///   - faults: The plan that may fail any call with any error.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @_spi(Testing)
  public init(
    atPath path: String, faults: SyscallFaultPlan, sealing: (any SealingKeyProvider)? = nil
  ) {
    self.directory = path
    self.sealing = sealing
    self.files = CacheFiles(sys: Syscalls(faults: faults))
  }

  /// Creates a store over a directory given as a file URL; no I/O.
  ///
  /// - Parameter url: The store directory.
  public init(at url: URL) {
    self.init(atPath: url.path)
  }

  /// Creates a sealed (or, with `nil`, unsealed) store over a directory given as a file URL;
  /// as ``init(atPath:sealing:)``.
  ///
  /// - Parameters:
  ///   - url: The store directory.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  public init(at url: URL, sealing: (any SealingKeyProvider)?) {
    self.init(atPath: url.path, sealing: sealing)
  }

  /// The earlier spelling of ``init(atPath:)``; it keeps working.
  ///
  /// - Parameter directory: The store directory's path.
  @available(*, deprecated, renamed: "init(atPath:)")
  public init(at directory: String) {
    self.init(atPath: directory)
  }

  /// The earlier spelling of ``init(atPath:sealing:)``; it keeps working.
  ///
  /// - Parameters:
  ///   - directory: The store directory's path.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @available(*, deprecated, renamed: "init(atPath:sealing:)")
  public init(at directory: String, sealing: (any SealingKeyProvider)?) {
    self.init(atPath: directory, sealing: sealing)
  }

  /// The earlier spelling of `init(atPath:faults:sealing:)`; it keeps working.
  ///
  /// - Parameters:
  ///   - directory: The store directory's path.
  ///   - faults: The plan that may fail any call with any error.
  ///   - sealing: The key's provider, or `nil` for an unsealed store.
  @_spi(Testing)
  @available(*, deprecated, renamed: "init(atPath:faults:sealing:)")
  public init(
    at directory: String, faults: SyscallFaultPlan, sealing: (any SealingKeyProvider)? = nil
  ) {
    self.init(atPath: directory, faults: faults, sealing: sealing)
  }

  /// The store directory's path, as ``FileClockMarkStore/directoryPath`` names it (the same as
  /// ``directory``).
  public var directoryPath: String { directory }

  /// See ``CacheItemStore/summary()``.
  ///
  /// A missing store directory or `cache/` directory is an empty cache.
  ///
  /// - Complexity: O(1) in the number of items: one 72-byte read and two `stat` calls, except
  ///   while the index is rebuilt (O(n) header reads, no payload read).
  public func summary() throws(CacheStoreError) -> ItemTimeSummary {
    guard let cache = try openCache() else { return .empty }
    defer { files.close(cache) }
    if sealing != nil { return try sealedSummary(cache, generation: nil) }
    if let fast = fastIndexHeader(cache) { return fast.summary }
    try refuseSealedIndex(cache)
    return try rebuildIndex(cache).summary
  }

  /// See ``CacheItemStore/item(forKey:)``. Reads the whole file and checks its CRC-32.
  public func item(forKey key: CacheItemKey) throws(CacheStoreError) -> CacheItem? {
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    if sealing != nil { return try sealedItem(cache, key, generation: nil) }
    return try readItem(key, inSet: cache)
  }

  /// Reads `key` from `<set>/items/<key>`, where `set` is `cache/` (the live set) or a sign-in's
  /// staging directory; `nil` when it is not there.
  func readItem(_ key: CacheItemKey, inSet set: FileDescriptor) throws(CacheStoreError)
    -> CacheItem?
  {
    let items: FileDescriptor
    do {
      items = try files.openDirectory(set, Self.itemsName)
    } catch  where error == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw unreadable(key, error)
    }
    defer { files.close(items) }
    let fd: FileDescriptor
    do {
      fd = try files.openFile(items, key.rawValue, .readOnly)
    } catch  where error == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw unreadable(key, error)
    }
    defer { files.close(fd) }
    do {
      let info = try files.status(fd)
      guard (info.kind == .regular) else {
        throw CacheStoreError(
          code: .itemUnreadable, key: key, reason: "item \(key) is not a regular file; left alone")
      }
      let bytes = try files.read(fd, count: Int(info.size), offset: 0)
      switch CacheFormat.decodeItemHeader(bytes) {
      case .failure where CacheSeal.looksSealedItem(bytes):
        throw CacheStoreError(
          code: .keyRequired, key: key,
          reason: "item \(key) is sealed; open the store with its sealing key")
      case .failure(let problem):
        throw CacheStoreError(
          code: .itemUnreadable, key: key, reason: "item \(key): \(problem.rawValue); left alone")
      case .success(let header):
        let payload = bytes[CacheFormat.itemHeaderSize...]
        let sum = CacheFormat.crc(payload, seed: CacheFormat.crc(bytes[0..<24]))
        guard UInt64(payload.count) == header.payloadLength, sum == header.checksum else {
          throw CacheStoreError(
            code: .itemUnreadable, key: key,
            reason: "item \(key): truncated or bad checksum; left alone")
        }
        return CacheItem(key: key, payload: Data(payload), writtenAt: header.writtenAt)
      }
    } catch let error as Errno {
      throw unreadable(key, error)
    } catch let error as CacheStoreError {
      throw error
    } catch {
      throw CacheStoreError(code: .itemUnreadable, key: key, reason: "\(error)")
    }
  }

  /// See ``CacheItemStore/keys()``. Lists the items directory (names that are not valid keys,
  /// which only another tool could have made, are skipped).
  public func keys() throws(CacheStoreError) -> [CacheItemKey] {
    guard let cache = try openCache() else { return [] }
    defer { files.close(cache) }
    if sealing != nil { return try sealedKeys(cache) }
    do {
      let items = try files.openDirectory(cache, Self.itemsName)
      defer { files.close(items) }
      return try files.names(in: items)
        .filter { CacheItemKey.problem(with: $0) == nil }
        .map { CacheItemKey(validated: $0) }
        .sorted()
    } catch  where error == .noSuchFileOrDirectory {
      return []
    } catch {
      throw CacheStoreError(code: .storeUnusable, errno: error.rawValue, reason: error.description)
    }
  }

  /// Opens `<directory>/cache` for reading, or returns `nil` when it (or the store directory)
  /// does not exist.
  func openCache() throws(CacheStoreError) -> FileDescriptor? {
    do {
      let store = try files.openDirectory(nil, directory)
      defer { files.close(store) }
      return try files.openDirectory(store, Self.cacheName)
    } catch  where error == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.rawValue,
        reason: "cannot open the cache in \(directory): \(error.description)")
    }
  }

  /// An unsealed store over a sealed index: `key_required` instead of a rebuild.
  func refuseSealedIndex(_ cache: FileDescriptor) throws(CacheStoreError) {
    guard let fd = try? files.openFile(cache, Self.indexName, [.readOnly, .nonBlocking]) else {
      return
    }
    defer { files.close(fd) }
    if let bytes = try? files.read(fd, count: 8, offset: 0), CacheSeal.looksSealedIndex(bytes) {
      throw CacheStoreError(
        code: .keyRequired,
        reason: "the item index in \(directory) is sealed; open the store with its sealing key")
    }
  }

  func unreadable(_ key: CacheItemKey, _ error: Errno) -> CacheStoreError {
    let why =
      error == .tooManySymbolicLinks ? "is a symbolic link (never followed)" : error.description
    return CacheStoreError(
      code: .itemUnreadable, key: key, errno: error.rawValue,
      reason: "item \(key) \(why); left alone")
  }
}
