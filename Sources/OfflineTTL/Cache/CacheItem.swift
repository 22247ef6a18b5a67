import Foundation

/// One cached item as read back from a ``CacheItemStore``: its bytes and the wall-clock time the
/// online session wrote it.
public struct CacheItem: Sendable, Hashable {
  /// The item's key.
  public let key: CacheItemKey
  /// The item's bytes, exactly as written.
  public let payload: Data
  /// The wall-clock time the store recorded when the item was written (<doc:Rules#Never-delete-on-expiry>), exact to
  /// the nanosecond; never inferred from a file's modification time.
  public let writtenAt: WallClockInstant

  /// Creates an item.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - payload: The item's bytes.
  ///   - writtenAt: When it was written.
  public init(key: CacheItemKey, payload: Data, writtenAt: WallClockInstant) {
    self.key = key
    self.payload = payload
    self.writtenAt = writtenAt
  }
}
