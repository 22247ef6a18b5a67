import Foundation

/// What a store says about one item before handing out its bytes: its key, the wall-clock time
/// it was written and its payload's size.
public struct CacheItemHeader: Sendable, Hashable {
  /// The item's key.
  public let key: CacheItemKey
  /// The exact `writtenAt` the store recorded.
  public let writtenAt: WallClockInstant
  /// The payload's length in bytes.
  public let size: Int

  /// Creates a header.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - writtenAt: When it was written.
  ///   - size: The payload's length in bytes (nonnegative).
  public init(key: CacheItemKey, writtenAt: WallClockInstant, size: Int) {
    self.key = key
    self.writtenAt = writtenAt
    self.size = size
  }
}

extension CacheItemStore {
  /// The default: reads the whole item (``item(forKey:generation:)``, or ``item(forKey:)``
  /// for `generation` `nil`), then hands its payload out in chunks of `chunkSize` bytes.
  ///
  /// Memory: the whole payload, once (the store keeps it whole, e.g. one sealed blob).
  public func streamItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    try streamWholeItem(
      forKey: key, generation: generation, chunkSize: chunkSize, accept: accept, chunk: chunk)
  }

  /// The default streaming read (see ``streamItem(forKey:generation:chunkSize:accept:chunk:)``),
  /// also used by stores that stream only some items (a sealed directory store).
  func streamWholeItem(
    forKey key: CacheItemKey, generation: UInt64?, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    let found: CacheItem?
    if let generation {
      found = try item(forKey: key, generation: generation)
    } else {
      found = try item(forKey: key)
    }
    guard let item = found else { return nil }
    return try Self.handOutWhole(item, chunkSize: chunkSize, accept: accept, chunk: chunk)
  }

  /// Hands a whole item out as a stream: its header to `accept`, then its payload in chunks.
  static func handOutWhole(
    _ item: CacheItem, chunkSize: Int, accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader {
    let header = CacheItemHeader(key: item.key, writtenAt: item.writtenAt, size: item.payload.count)
    try accept(header)
    try item.payload.withUnsafeBytes { bytes in
      try handOut(bytes, chunkSize: chunkSize, to: chunk)
    }
    return header
  }

  /// Calls `chunk` with consecutive pieces of `bytes`, each `chunkSize` bytes but the last.
  static func handOut(
    _ bytes: UnsafeRawBufferPointer, chunkSize: Int,
    to chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let size = Swift.max(1, chunkSize)
    var offset = 0
    while offset < bytes.count {
      let end = Swift.min(bytes.count, offset + size)
      try chunk(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
      offset = end
    }
  }
}
