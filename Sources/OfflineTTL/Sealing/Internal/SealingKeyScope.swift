import Synchronization

/// One sealing key per operation: the first load of a provider's key inside a scope is the key
/// every later load of that provider (for the same store directory) returns until the scope
/// ends, whichever store asks (the item store and the mark store each hold their own provider).
///
/// A sign-in stages its items sealed with one key and commits with the mark reset, which seals
/// the record; a read verifies the mark, the index and the item. Loading the key again for each
/// of those steps let a key file removed or replaced in between split one operation over two
/// keys: a sign-in that reported success but left the index sealed with the old key and the
/// record with a new one it had just created (readable with neither), or a read that verified
/// the mark with one key and the index with another. Inside a scope the key is read once, so an
/// operation is sealed or verified with one key, as if the change happened after it; the next
/// operation reads the key file again and judges the change.
///
/// Scopes: the sealed sign-in and commit (around the writer lock, so the mark reset of its
/// commit point is inside), the gate's check, and each read of an offline reader. A scope
/// inside a scope is the outer one.
///
/// **Cost of a check.** A store names its provider and directory once, when it is made
/// (``Name``); a scope keeps its first key beside the name without a dictionary, so a repeated
/// check compares one name and allocates nothing here besides the scope itself.
final class SealingKeyScope: Sendable {
  /// A provider's key for one store directory: the provider's description and the directory,
  /// built once per store value (two stores over one directory with providers that describe
  /// themselves alike share the scope's key).
  struct Name: Sendable, Equatable {
    let text: String

    /// The name of `provider`'s key for the store in `directory`.
    init(_ provider: any SealingKeyProvider, directory: String) {
      text = "\(provider)\u{0}\(directory)"
    }
  }

  private struct Kept: Sendable {
    /// The first key loaded in the scope (nearly every scope loads one).
    var first: (name: Name, keys: SealKeys)?
    /// Keys of other names (a scope over stores of several directories or providers).
    var others: [String: SealKeys] = [:]

    func keys(_ name: Name) -> SealKeys? {
      if let first, first.name == name { return first.keys }
      return others.isEmpty ? nil : others[name.text]
    }

    mutating func keep(_ name: Name, _ keys: SealKeys) {
      if first == nil {
        first = (name, keys)
      } else {
        others[name.text] = keys
      }
    }
  }

  private let kept = Mutex(Kept())

  /// The scope of the operation running on this task, if any.
  @TaskLocal static var current: SealingKeyScope?

  /// Runs `body` inside a scope: the current one, or a new one for its duration.
  ///
  /// - Complexity: O(1) besides `body`.
  static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
    -> Result
  {
    if current != nil { return try body() }
    let outcome = $current.withValue(SealingKeyScope()) {
      Swift.Result { () throws(Failure) -> Result in try body() }
    }
    return try outcome.get()
  }

  /// The keys named `name` (a provider's, for one store directory): those loaded first in this
  /// scope, or `load()`'s (kept for the rest of the scope). Outside a scope, `load()`'s.
  ///
  /// - Throws: What `load` throws (nothing is kept then).
  /// - Complexity: O(1): one comparison of the name with the scope's first.
  static func keys(
    named name: Name, load: () throws(StoreError) -> SealKeys
  ) throws(StoreError) -> SealKeys {
    guard let scope = current else { return try load() }
    if let kept = scope.kept.withLock({ $0.keys(name) }) { return kept }
    let loaded = try load()
    return scope.kept.withLock { kept in
      if let earlier = kept.keys(name) { return earlier }
      kept.keep(name, loaded)
      return loaded
    }
  }
}
