import Foundation

/// Stagings that no reader reads and the next sign-in removes (`docs/sign-in-protocol.md`,
/// "Each staging belongs to one sign-in"), for a status report.
extension DirectoryCacheStore {
  /// The most stagings that ``staleStagings(naming:)`` opens to find the one the mark record
  /// commits: the candidates of the record's generation (sealed) or of a generation up to it
  /// (unsealed), in the order a reader looks at them (the highest generation first). An honest
  /// store has at most one; past this many, the rest are counted stale unopened.
  public static let maximumJudgedStagings = 16

  /// The stagings in `cache/` (`next-<g>`) that the mark record does not commit, counted, and
  /// the first `limit` of their names in sorted order: every staging but the one of the
  /// record's generation (or, unsealed, an earlier one) whose sign-in id is the record's
  /// (``ClockMarkRecord/signInID``) and whose index is valid (sealed: authenticates for that
  /// generation, id and store), the one a reader would read. Such a staging was left by a
  /// sign-in killed before its commit point, is a copy put back from elsewhere, or belongs to a
  /// sign-in still before its commit point now. It is never read; the next sign-in removes it.
  ///
  /// Reads only (one listing of `cache/`, one read of the mark record, and the id and index of
  /// at most ``maximumJudgedStagings`` stagings); writes nothing, takes no lock of the item
  /// store. A staging whose generation no record could commit is counted without being opened.
  ///
  /// - Parameter limit: How many names to return at most; zero or less returns none.
  /// - Returns: How many stagings are stale, and the first `limit` of their names, sorted;
  ///   `(0, [])` when the store or `cache/` does not exist.
  /// - Throws: ``StoreError`` `store_unusable` when the store directory or `cache/` cannot be
  ///   opened or listed.
  /// - Complexity: O(s log s) for s stagings (one listing and a sort of their names), plus at
  ///   most ``maximumJudgedStagings`` staging opens and index reads, each bounded by the index
  ///   format's maximum.
  public func staleStagings(naming limit: Int) throws(StoreError) -> (count: Int, names: [String]) {
    guard let cache = try openCache() else { return (0, []) }
    defer { files.close(cache) }
    let all: [(name: String, generation: UInt64)]
    do {
      all = try stagings(cache)
    } catch {
      throw failure(error, .storeUnusable)
    }
    guard !all.isEmpty else { return (0, []) }
    let committed = committedStagingName(cache, among: all)
    let stale = all.map(\.name).filter { $0 != committed }
    return (stale.count, Array(stale.sorted().prefix(Swift.max(0, limit))))
  }

  /// The names of every stale staging, sorted (``staleStagings(naming:)`` with no limit on the
  /// names).
  ///
  /// - Returns: The names, sorted; empty when the store or `cache/` does not exist.
  /// - Throws: As ``staleStagings(naming:)``.
  /// - Complexity: As ``staleStagings(naming:)``.
  public func staleStagings() throws(StoreError) -> [String] {
    try staleStagings(naming: .max).names
  }

  /// The staging the mark record commits among `all`, if any: the first of the candidates
  /// (the record's generation when sealed, a generation up to it when unsealed; the highest
  /// first, as a reader looks) whose sign-in id is the record's and whose index is valid,
  /// judging at most ``maximumJudgedStagings`` of them.
  private func committedStagingName(
    _ cache: StoreDirectory, among all: [(name: String, generation: UInt64)]
  ) -> String? {
    guard sealing != nil else {
      guard let record = try? directoryMarks.read() else { return nil }
      let candidates = all.filter { $0.generation <= record.generation }
        .sorted { $0.generation > $1.generation }.prefix(Self.maximumJudgedStagings)
      for candidate in candidates {
        guard let next = try? files.openDirectory(cache, candidate.name) else { continue }
        defer { files.close(next) }
        if (try? stagedSignIn(next)) == .some(record.signInID),
          ((try? stagedCatalog(in: next)) ?? nil) != nil
        {
          return candidate.name
        }
      }
      return nil
    }
    guard let keys = try? sealKeys(creating: false),
      let (record, storeID) = try? sealedMarks(keys: keys).readSealed()
    else { return nil }
    let candidates = all.filter { $0.generation == record.generation }
      .prefix(Self.maximumJudgedStagings)
    for candidate in candidates {
      guard let next = try? files.openDirectory(cache, candidate.name) else { continue }
      defer { files.close(next) }
      if let staged = try? loadSealedIndex(
        next, keys: keys, withBody: false, signIn: record.signInID),
        staged.header.generation == candidate.generation, staged.header.storeID == storeID
      {
        return candidate.name
      }
    }
    return nil
  }
}
