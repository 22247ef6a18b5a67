import Foundation

/// A set of item writes and deletions applied by ``CacheItemStore/commit(preparing:)`` as one
/// durable commit. Only ``OnlineSession`` builds these for a gate; they are public so that other
/// stores can be tested with the shared conformance suite.
///
/// Order of application: ``removesAll`` first (sign-out), then each entry; a later change to the
/// same key replaces an earlier one in the set.
public struct CacheChanges: Sendable, Hashable {
  /// One item to write.
  public struct Write: Sendable, Hashable {
    /// The bytes.
    public let payload: Data
    /// The wall-clock time to record for it.
    public let writtenAt: WallClockInstant
  }

  /// Whether every existing item is removed first.
  public private(set) var removesAll: Bool = false
  /// The changes by key: a write, or `nil` for a deletion.
  public private(set) var entries: [CacheItemKey: Write?] = [:]

  /// An empty set of changes.
  public init() {}

  /// Whether nothing would change.
  public var isEmpty: Bool { !removesAll && entries.isEmpty }

  /// Adds a write (a new item or a replacement) stamped `writtenAt`.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - payload: The bytes.
  ///   - writtenAt: The wall-clock time of the write, as the online session read it.
  public mutating func write(_ key: CacheItemKey, _ payload: Data, writtenAt: WallClockInstant) {
    entries[key] = .some(Write(payload: payload, writtenAt: writtenAt))
  }

  /// Adds a deletion (of an item that may not exist).
  ///
  /// - Parameter key: The item's key.
  public mutating func delete(_ key: CacheItemKey) {
    entries[key] = .some(nil)
  }

  /// Removes every item first, then applies the other entries (sign-out).
  public mutating func removeAll() {
    removesAll = true
    entries.removeAll()
  }
}
