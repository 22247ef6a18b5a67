import Foundation

/// Stagings that no reader reads and the next sign-in removes (`docs/sign-in-protocol.md`,
/// "Each staging belongs to one sign-in"), for a status report.
extension DirectoryCacheStore {
  /// The names of the stagings in `cache/` (`next-<g>`) that the mark record does not commit:
  /// every staging but the one of the record's generation (or, unsealed, an earlier one) whose
  /// sign-in id is the record's (``ClockMarkRecord/signInID``) and whose index is valid (sealed:
  /// authenticates for that generation, id and store). Such a staging was left by a sign-in
  /// killed before its commit point, is a copy put back from elsewhere, or belongs to a sign-in
  /// still before its commit point now. It is never read; the next sign-in removes it.
  ///
  /// Reads only (one listing of `cache/`, one read of the mark record, and each staging's id
  /// and index); writes nothing, takes no lock of the item store.
  ///
  /// - Returns: The names, sorted; empty when the store or `cache/` does not exist.
  /// - Throws: ``StoreError`` `store_unusable` when the store directory or `cache/` cannot be
  ///   opened or listed.
  /// - Complexity: O(s) for s stagings (at most one, unless copies were put back), each read of
  ///   its index bounded by the index format's maximum.
  public func staleStagings() throws(StoreError) -> [String] {
    guard let cache = try openCache() else { return [] }
    defer { files.close(cache) }
    let all: [(name: String, generation: UInt64)]
    do {
      all = try stagings(cache)
    } catch {
      throw failure(error, .storeUnusable)
    }
    guard !all.isEmpty else { return [] }
    return all.filter { !isCommittedStaging(cache, $0.name, generation: $0.generation) }
      .map(\.name).sorted()
  }

  /// Whether the mark record commits the staging `name` of generation `generation`.
  private func isCommittedStaging(_ cache: StoreDirectory, _ name: String, generation: UInt64)
    -> Bool
  {
    guard let next = try? files.openDirectory(cache, name) else { return false }
    defer { files.close(next) }
    guard sealing != nil else {
      guard
        let record = try? directoryMarks.read(),
        generation <= record.generation
      else { return false }
      return (try? stagedSignIn(next)) == .some(record.signInID)
        && ((try? stagedCatalog(in: next)) ?? nil) != nil
    }
    guard let keys = try? sealKeys(creating: false),
      let (record, storeID) = try? sealedMarks(keys: keys).readSealed(),
      generation == record.generation,
      let staged = try? loadSealedIndex(
        next, keys: keys, withBody: false, signIn: record.signInID)
    else { return false }
    return staged.header.generation == generation && staged.header.storeID == storeID
  }
}
