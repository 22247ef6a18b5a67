#if SecretService
  import Foundation
  import OfflineTTL

  /// A `CacheItemStore` that keeps each cached item as a secret in the Secret Service (GNOME
  /// Keyring, KWallet, KeePassXC), through libsecret: the Linux counterpart of keeping a cache in
  /// the Keychain.
  ///
  /// Each item is one secret in the `default` collection with the attributes `application` =
  /// ``SecretServiceStoreConfiguration/applicationID``, `kind` = `item`, `key` = the item's key;
  /// its value holds the exact `writtenAt` (nanoseconds) before the payload, with a CRC-32. One
  /// more secret (`kind` = `index`) lists every key's `writtenAt`, so ``summary()`` reads one
  /// secret and no payload.
  ///
  /// - Serialization: ``commit(preparing:)`` holds the items' `flock`ed lock file,
  ///   `secret-service.<application id>.items.lock` in the lock directory, and prepares the
  ///   changes under it (a sign-in stamps its items there). It is not the clock mark's lock file
  ///   (`….marks.lock`, held by ``SecretServiceClockMarkStore``): a sign-in resets the mark while
  ///   it holds the items' lock, so the two are separate files, taken in that order.
  /// - Atomicity: the Secret Service has no transactions. Each item is replaced whole (old or new,
  ///   never half), but a commit of several items interrupted by a crash may leave some items new
  ///   and some old; the index, marked dirty for the commit's duration, is then rebuilt from the
  ///   items. Each item written costs the provider one save of its collection (not one sync per
  ///   commit, as the directory store achieves).
  /// - Fail closed: an item whose value does not decode is `itemUnreadable` and left alone;
  ///   service failures carry a `StoreUnusableReason` (`collection_locked` without a prompt,
  ///   `no_session_bus`, `no_provider`, `timed_out`, …). No read path writes or deletes anything;
  ///   only a commit's own deletions (and `CacheChanges.removeAll()`) delete.
  public struct SecretServiceCacheStore: CacheItemStore {
    /// Where the items live and how operations are bounded.
    public let configuration: SecretServiceStoreConfiguration

    static let itemKind = "item"
    static let indexKind = "index"
    static let indexKey = "items"

    /// Creates a store; connects lazily, once per operation.
    ///
    /// - Parameter configuration: The application id, lock directory, prompt policy and timeout.
    public init(configuration: SecretServiceStoreConfiguration) {
      self.configuration = configuration
    }

    /// The count and the oldest and newest `writtenAt`, from the index secret.
    ///
    /// - Returns: The summary; `ItemTimeSummary.empty` when nothing is stored.
    /// - Throws: `StoreError`: `itemUnreadable` when a rebuild of a missing or
    ///   interrupted index meets an unreadable item; `storeUnusable` with its reason.
    /// - Complexity: One search and one secret of O(n) lines; O(n) searches' worth of secrets
    ///   while the index is rebuilt (in memory: a read writes nothing).
    public func summary() throws(StoreError) -> ItemTimeSummary {
      try run(locked: false) { session throws(StoreError) in
        let index = try Self.currentIndex(session, tolerating: [])
        return ItemTimeSummary(writtenAt: index.writtenAt.values)
      }
    }

    /// One item, or `nil` when none is stored under `key`.
    ///
    /// - Parameter key: The item's key.
    /// - Returns: The item's bytes and exact `writtenAt`.
    /// - Throws: `StoreError`: `itemUnreadable` (left alone), or `storeUnusable`.
    public func item(forKey key: CacheItemKey) throws(StoreError) -> CacheItem? {
      try run(locked: false) { session throws(StoreError) in
        let found = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
          try session.find(kind: Self.itemKind, key: key.rawValue)
        }
        guard let first = found.first else { return nil }
        guard found.count == 1 else {
          throw StoreError(
            code: .itemUnreadable, key: key,
            message: "\(found.count) secrets carry this item's attributes; left alone")
        }
        let decoded = try Self.decode(first, key: key)
        return CacheItem(key: key, payload: decoded.payload, writtenAt: decoded.writtenAt)
      }
    }

    /// Every stored key, in ascending byte order (from the secrets' attributes; no value is read).
    ///
    /// - Returns: The keys.
    /// - Throws: `StoreError`: `itemUnreadable` for an attribute that is not a valid key,
    ///   or `storeUnusable`.
    /// - Complexity: One search; O(n log n) to sort.
    public func keys() throws(StoreError) -> [CacheItemKey] {
      try run(locked: false) { session throws(StoreError) in
        let found = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
          try session.find(kind: Self.itemKind, key: nil, loadSecrets: false)
        }
        var keys: [CacheItemKey] = []
        for item in found {
          guard let raw = item.key, let key = try? CacheItemKey(raw) else {
            throw StoreError(
              code: .itemUnreadable, message: "a secret's key attribute is not a valid item key")
          }
          keys.append(key)
        }
        return Array(Set(keys)).sorted()
      }
    }

    /// Applies the changes `prepare` returns, under the lock file (`prepare` runs under it,
    /// before anything is written).
    ///
    /// - Parameter prepare: The writes and deletions, or `nil` to refuse.
    /// - Returns: Whether the changes were applied.
    /// - Throws: `StoreError`: `writeFailed` (with the service's reason; items written
    ///   before the failure are new, the rest old, the index left dirty), `lockFailed`,
    ///   `itemUnreadable` (an unreadable item the commit does not replace blocks an index
    ///   rebuild), or `storeUnusable`.
    /// - Complexity: Two searches, one call per change, two index writes.
    public func commit(preparing prepare: () -> CacheChanges?) throws(StoreError) -> Bool {
      // A commit is online: it replaces a lock file it cannot use but may (a hard link).
      try run(locked: true, repairing: true) { session throws(StoreError) in
        guard let changes = prepare() else { return false }
        guard !changes.isEmpty else { return true }
        let touched = Set(changes.entries.keys.map(\.rawValue))
        var index = try Self.currentIndex(
          session, tolerating: changes.removesAll ? nil : touched)
        let existing = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
          try session.find(kind: Self.itemKind, key: nil, loadSecrets: false)
        }
        let indexItems = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
          try session.find(kind: Self.indexKind, key: Self.indexKey, loadSecrets: false)
        }
        try SecretServiceOperation.perform { () throws(SecretServiceFault) in
          index.isClean = false
          try writeIndex(index, session: session, existing: indexItems)
          var byKey: [String: [SecretServiceFoundItem]] = [:]
          for item in existing { byKey[item.key ?? "", default: []].append(item) }
          if changes.removesAll {
            for item in existing { try session.delete(item.item) }
            byKey = [:]
            index.writtenAt = [:]
          }
          for (key, change) in changes.entries.sorted(by: { $0.key < $1.key }) {
            let current = byKey[key.rawValue] ?? []
            if let write = change {
              let bytes = SecretServiceCacheCoding.encodeItem(
                payload: write.payload, writtenAt: write.writtenAt)
              if let first = current.first {
                try session.write(
                  bytes, contentType: SecretServiceCacheCoding.itemContentType, to: first.item)
                for duplicate in current.dropFirst() { try session.delete(duplicate.item) }
              } else {
                try session.create(
                  kind: Self.itemKind, key: key.rawValue, label: label(key.rawValue),
                  bytes: bytes, contentType: SecretServiceCacheCoding.itemContentType)
              }
              index.writtenAt[key.rawValue] = write.writtenAt
            } else {
              for item in current { try session.delete(item.item) }
              index.writtenAt[key.rawValue] = nil
            }
          }
          index.isClean = true
          let indexNow = try session.find(
            kind: Self.indexKind, key: Self.indexKey, loadSecrets: false)
          try writeIndex(index, session: session, existing: indexNow)
        }
        return true
      }
    }

    private func label(_ key: String) -> String {
      "OfflineTTL cache item \(key) (\(configuration.applicationID))"
    }

    private func writeIndex(
      _ index: SecretServiceCacheCoding.Index, session: SecretServiceSession,
      existing: [SecretServiceFoundItem]
    ) throws(SecretServiceFault) {
      let bytes = SecretServiceCacheCoding.encodeIndex(index)
      if let first = existing.first {
        try session.write(
          bytes, contentType: SecretServiceCacheCoding.indexContentType, to: first.item)
        for duplicate in existing.dropFirst() { try session.delete(duplicate.item) }
      } else {
        try session.create(
          kind: Self.indexKind, key: Self.indexKey,
          label: "OfflineTTL cache index (\(configuration.applicationID))", bytes: bytes,
          contentType: SecretServiceCacheCoding.indexContentType)
      }
    }

    // MARK: - Helpers

    /// The clean index, or one rebuilt in memory from the items when it is missing, dirty,
    /// duplicated or does not decode. `tolerating` lists keys whose unreadable items may be
    /// skipped (a commit replaces them); `nil` skips every unreadable item (a commit removes all).
    private static func currentIndex(_ session: SecretServiceSession, tolerating: Set<String>?)
      throws(StoreError) -> SecretServiceCacheCoding.Index
    {
      let stored = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
        try session.find(kind: indexKind, key: indexKey)
      }
      if stored.count == 1, let secret = stored[0].secret,
        let index = SecretServiceCacheCoding.decodeIndex(secret), index.isClean
      {
        return index
      }
      if stored.count == 1, stored[0].secret == nil { throw locked() }
      let items = try SecretServiceOperation.perform { () throws(SecretServiceFault) in
        try session.find(kind: itemKind, key: nil)
      }
      var writtenAt: [String: WallClockInstant] = [:]
      for item in items {
        let raw = item.key ?? ""
        guard let secret = item.secret else { throw locked() }
        guard let decoded = SecretServiceCacheCoding.decodeItem(secret), writtenAt[raw] == nil
        else {
          if tolerating == nil || tolerating!.contains(raw) { continue }
          throw StoreError(
            code: .itemUnreadable, key: try? CacheItemKey(raw),
            message: "rebuilding the index met an item that does not decode; left alone")
        }
        writtenAt[raw] = decoded.writtenAt
      }
      return SecretServiceCacheCoding.Index(writtenAt: writtenAt, isClean: true)
    }

    private static func decode(_ found: SecretServiceFoundItem, key: CacheItemKey)
      throws(StoreError) -> (payload: Data, writtenAt: WallClockInstant)
    {
      guard let secret = found.secret else { throw locked() }
      guard let decoded = SecretServiceCacheCoding.decodeItem(secret) else {
        throw StoreError(
          code: .itemUnreadable, key: key,
          message: "the item's secret does not decode (format or checksum); left alone")
      }
      return decoded
    }

    /// Runs `body` holding the `items` lock file that serializes every commit, without
    /// connecting to the service and writing nothing.
    ///
    /// - Parameter body: The work to serialize with the writers.
    /// - Returns: What `body` returned.
    /// - Throws: `StoreError` `lockTimedOut` when another holder keeps the lock file past
    ///   ``SecretServiceStoreConfiguration/lockTimeout``, `lockFailed` when it cannot be used.
    public func withWriterLock<Result>(_ body: () -> Result) throws(StoreError) -> Result {
      try SecretServiceLockFile.withLock(
        path: configuration.lockFilePath(for: "items"), timeout: configuration.lockTimeout,
        repairing: true, failure: SecretServiceLockFile.storeError
      ) { () throws(StoreError) -> Result in body() }
    }

    private static func locked() -> StoreError {
      StoreError(
        code: .storeUnusable, unusableReason: .collectionLocked,
        message: "the secret is locked")
    }

    private func run<Result>(
      locked: Bool, repairing: Bool = false,
      _ body: (SecretServiceSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
      try SecretServiceOperation.run(
        configuration, lock: locked ? "items" : nil, repairing: repairing, body)
    }
  }
#endif
