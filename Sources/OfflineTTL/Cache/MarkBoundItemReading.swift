/// An item store whose item set is bound to the mark record (a sealed ``DirectoryCacheStore``:
/// its index names the record's generation and store id) and that can read for a caller holding
/// that binding already: the offline reader, whose decision observed the record under its lock
/// and whose generation it confirms again after every read (``OfflineCacheReader``). The store
/// then skips its own locked read of the record; a set that is not bound to the binding given is
/// judged against the record itself, as without it.
///
/// Internal on purpose: a store that does not conform (any other backend, or a wrapper around a
/// directory store) takes the generation-only reads, which check the binding themselves.
protocol MarkBoundItemReading: CacheItemStore {
  /// ``CacheItemStore/item(forKey:generation:)`` of the set bound to `binding`.
  func item(forKey key: CacheItemKey, boundTo binding: MarkBinding) throws(StoreError)
    -> CacheItem?

  /// ``CacheItemStore/streamItem(forKey:generation:chunkSize:accept:chunk:)`` of the set bound
  /// to `binding`.
  func streamItem(
    forKey key: CacheItemKey, boundTo binding: MarkBinding, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader?

  /// ``CacheItemStore/keys(forGeneration:)`` of the set bound to `binding`.
  func keys(boundTo binding: MarkBinding) throws(StoreError) -> [CacheItemKey]
}

extension DirectoryCacheStore: MarkBoundItemReading {
  func item(forKey key: CacheItemKey, boundTo binding: MarkBinding) throws(StoreError)
    -> CacheItem?
  {
    guard sealing != nil else { return try item(forKey: key, generation: binding.generation) }
    guard let cache = try openCache() else { return nil }
    defer { files.close(cache) }
    return try sealedItem(cache, key, generation: binding.generation, known: binding)
  }

  func streamItem(
    forKey key: CacheItemKey, boundTo binding: MarkBinding, chunkSize: Int,
    accept: (CacheItemHeader) throws -> Void,
    chunk: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    guard sealing != nil else {
      return try streamItem(
        forKey: key, generation: binding.generation, chunkSize: chunkSize, accept: accept,
        chunk: chunk)
    }
    guard let item = try item(forKey: key, boundTo: binding) else { return nil }
    return try Self.handOutWhole(item, chunkSize: chunkSize, accept: accept, chunk: chunk)
  }

  func keys(boundTo binding: MarkBinding) throws(StoreError) -> [CacheItemKey] {
    guard sealing != nil else { return try keys(forGeneration: binding.generation) }
    guard let cache = try openCache() else { return [] }
    defer { files.close(cache) }
    return try sealedKeys(cache, generation: binding.generation, known: binding)
  }
}
