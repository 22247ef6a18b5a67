import Foundation
import OfflineTTL

/// A cache store that forwards every call to `base` and runs a hook once, just before or just
/// after the next read of one item or of the keys of a generation's set: an online sign-in
/// committed there forces the interleaving a reader must survive, deterministically.
final class HookedCacheStore: ForwardingCacheStore, @unchecked Sendable {
  /// Where the hook runs.
  enum Point: String, CaseIterable, CustomStringConvertible, Sendable {
    /// Before the reader reads the item (after its recheck).
    case beforeTheItem
    /// After the item was read, before the reader reads the mark's generation again.
    case afterTheItem
    /// In a streamed read, once the reader accepted the item's header and before the store
    /// verifies the payload's checksum (a pass that takes a second or more for a gigabyte).
    case afterTheHeader
    var description: String { rawValue }
  }

  let base: any CacheItemStore
  private let lock = NSLock()
  private var hook: (point: Point, body: () -> Void)?

  init(_ base: any CacheItemStore) { self.base = base }

  /// Runs `body` once, at `point` of the next item or keys read.
  func once(at point: Point, _ body: @escaping () -> Void) {
    lock.withLock { hook = (point, body) }
  }

  private func run(at point: Point) {
    let body = lock.withLock { () -> (() -> Void)? in
      guard let pending = hook, pending.point == point else { return nil }
      hook = nil
      return pending.body
    }
    body?()
  }

  func item(forKey key: CacheItemKey, generation: UInt64) throws(StoreError) -> CacheItem? {
    run(at: .beforeTheItem)
    defer { run(at: .afterTheItem) }
    return try base.item(forKey: key, generation: generation)
  }

  func streamItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    run(at: .beforeTheItem)
    defer { run(at: .afterTheItem) }
    return try base.streamItem(
      forKey: key, generation: generation, chunkSize: chunkSize,
      accept: { header in
        try accept(header)
        run(at: .afterTheHeader)
      }, chunk: chunk)
  }

  func keys(forGeneration generation: UInt64) throws(StoreError) -> [CacheItemKey] {
    run(at: .beforeTheItem)
    defer { run(at: .afterTheItem) }
    return try base.keys(forGeneration: generation)
  }
}
