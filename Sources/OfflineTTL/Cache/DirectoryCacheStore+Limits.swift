extension DirectoryCacheStore {
  /// The largest payload one item may have in a directory store: 1 GiB (2^30 bytes).
  ///
  /// A larger write is refused before anything is written (``StoreError`` `writeFailed`,
  /// `EFBIG`); a larger length found on disk makes the item unreadable before any buffer is
  /// allocated. Callers that read an item's bytes from elsewhere (the command line's
  /// `sign-in --put`) check the same bound before reading.
  public static let maximumPayloadLength = Int(CacheFormat.maximumPayloadLength)
}
