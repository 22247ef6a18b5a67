import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
///   ``CacheStoreError/Code/itemUnreadable`` and is left where it is.
public struct DirectoryCacheStore: CacheItemStore {
  /// The store directory (shared with `FileClockMarkStore`).
  public let directory: String

  static let cacheName = "cache"
  static let itemsName = "items"
  static let tmpName = "tmp"
  static let lockName = "lock"
  static let indexName = "index"
  static let pendingName = "pending"

  /// Creates a store over a directory; nothing is created until the first commit.
  ///
  /// - Parameter directory: The store directory's path. Its parents may be symbolic links; the
  ///   directory itself and everything the store creates inside it are never followed as links.
  public init(at directory: String) {
    self.directory = directory
  }

  /// Creates a store over a directory given as a file URL.
  ///
  /// - Parameter url: The store directory.
  public init(at url: URL) {
    self.init(at: url.path)
  }

  /// See ``CacheItemStore/summary()``.
  ///
  /// A missing store directory or `cache/` directory is an empty cache.
  ///
  /// - Complexity: O(1) in the number of items: one 72-byte read and two `stat` calls, except
  ///   while the index is rebuilt (O(n) header reads, no payload read).
  public func summary() throws(CacheStoreError) -> ItemTimeSummary {
    guard let cache = try openCache() else { return .empty }
    defer { CacheFiles.close(cache) }
    if let fast = fastIndexHeader(cache) { return fast.summary }
    return try rebuildIndex(cache).summary
  }

  /// See ``CacheItemStore/item(forKey:)``. Reads the whole file and checks its CRC-32.
  public func item(forKey key: CacheItemKey) throws(CacheStoreError) -> CacheItem? {
    guard let cache = try openCache() else { return nil }
    defer { CacheFiles.close(cache) }
    let items: Int32
    do {
      items = try CacheFiles.openDirectory(cache, Self.itemsName)
    } catch where error.errno == ENOENT {
      return nil
    } catch {
      throw unreadable(key, error)
    }
    defer { CacheFiles.close(items) }
    let fd: Int32
    do {
      fd = try CacheFiles.openFile(items, key.rawValue, O_RDONLY)
    } catch where error.errno == ENOENT {
      return nil
    } catch {
      throw unreadable(key, error)
    }
    defer { CacheFiles.close(fd) }
    do {
      let info = try CacheFiles.status(fd)
      guard info.isRegularFile else {
        throw CacheStoreError(
          code: .itemUnreadable, key: key, reason: "item \(key) is not a regular file; left alone")
      }
      let bytes = try CacheFiles.read(fd, count: Int(info.st_size), offset: 0)
      switch CacheFormat.decodeItemHeader(bytes) {
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
    } catch let error as SystemCallError {
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
    defer { CacheFiles.close(cache) }
    do {
      let items = try CacheFiles.openDirectory(cache, Self.itemsName)
      defer { CacheFiles.close(items) }
      return try CacheFiles.names(in: items)
        .filter { CacheItemKey.problem(with: $0) == nil }
        .map { CacheItemKey(validated: $0) }
        .sorted()
    } catch where error.errno == ENOENT {
      return []
    } catch {
      throw CacheStoreError(code: .storeUnusable, errno: error.errno, reason: error.message)
    }
  }

  /// Opens `<directory>/cache` for reading, or returns `nil` when it (or the store directory)
  /// does not exist.
  func openCache() throws(CacheStoreError) -> Int32? {
    do {
      let store = try CacheFiles.openDirectory(AT_FDCWD, directory)
      defer { CacheFiles.close(store) }
      return try CacheFiles.openDirectory(store, Self.cacheName)
    } catch where error.errno == ENOENT {
      return nil
    } catch {
      throw CacheStoreError(
        code: .storeUnusable, errno: error.errno,
        reason: "cannot open the cache in \(directory): \(error.message)")
    }
  }

  func unreadable(_ key: CacheItemKey, _ error: SystemCallError) -> CacheStoreError {
    let why = error.errno == ELOOP ? "is a symbolic link (never followed)" : error.message
    return CacheStoreError(
      code: .itemUnreadable, key: key, errno: error.errno,
      reason: "item \(key) \(why); left alone")
  }
}
