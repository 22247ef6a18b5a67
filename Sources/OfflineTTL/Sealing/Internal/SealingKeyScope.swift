import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
/// **The scope belongs to the thread that runs it**, for the duration of `body`: every scope is
/// a synchronous operation (it blocks its thread), so every store call of it runs on that
/// thread, and nothing else runs there until `body` returns. Store work handed to another
/// thread runs outside the scope and loads the key for itself (correct: it is a separate
/// operation). The kept keys live in `run`'s frame and a thread-specific slot
/// (`pthread_getspecific`) holds their address; a task-local value allocated its binding on the
/// heap (outside an async task) and the scope object besides, three allocations per check.
///
/// **Cost of a check.** A store names its provider and directory once, when it is made
/// (``Name``); a scope keeps its first key beside the name without a dictionary, so a repeated
/// check compares one name and allocates nothing here.
enum SealingKeyScope {
  /// A provider's key for one store directory: the provider's description and the directory,
  /// built once per store value (two stores over one directory with providers that describe
  /// themselves alike share the scope's key).
  ///
  /// Names are interned: every live name of one text holds the same token, so two names are
  /// compared by reference (the item store's and the mark store's, in every check) and copied
  /// with one reference count.
  struct Name: Sendable, Equatable {
    let token: Token

    var text: String { token.text }

    /// The name of `provider`'s key for the store in `directory`.
    ///
    /// - Complexity: One lookup in the process's table of live names (under its lock).
    init(_ provider: any SealingKeyProvider, directory: String) {
      token = Token.interned("\(provider)\u{0}\(directory)")
    }

    static func == (lhs: Name, rhs: Name) -> Bool { lhs.token === rhs.token }
  }

  /// The one token of a name's text while any name of that text lives.
  ///
  /// The table holds its tokens strongly and sweeps out those only it holds, as it grows. A
  /// table of weak references would give every token a side table, and every copy of a name a
  /// retain and a release through it (the slow path of Swift's reference counting: a quarter
  /// of a sealed repeated check's time went to reference counting).
  final class Token: Sendable {
    let text: String

    private init(_ text: String) {
      self.text = text
    }

    /// The tokens by text, and how many entries the table may hold before those no name holds
    /// any more are swept out.
    private static let table = Mutex<(tokens: [String: Token], sweepAt: Int)>(([:], 64))

    /// Entries in the table: the tokens names hold, and those none holds since the last sweep.
    static var tableCount: Int { table.withLock { $0.tokens.count } }

    /// The token of `text`, or a new one.
    ///
    /// - Complexity: O(1) lookups; a sweep, O(entries), when the table has doubled since the
    ///   last one.
    static func interned(_ text: String) -> Token {
      table.withLock { table -> Token in
        if let live = table.tokens[text] { return live }
        if table.tokens.count >= table.sweepAt {
          for held in Array(table.tokens.keys) {
            // Moved out of the table, the token is uniquely referenced when no name holds
            // it; then no other thread can copy it either (a copy needs a reference).
            var token = table.tokens.removeValue(forKey: held)!
            if !isKnownUniquelyReferenced(&token) { table.tokens[held] = token }
          }
          table.sweepAt = Swift.max(64, 2 * table.tokens.count)
        }
        let token = Token(text)
        table.tokens[text] = token
        return token
      }
    }
  }

  /// The keys of one scope (only ever touched by the thread running it).
  private struct Kept {
    /// The name of the first key loaded in the scope (nearly every scope loads one).
    var firstName: Name?
    /// The first key loaded in the scope.
    var firstKeys: SealKeys?
    /// Keys of other names (a scope over stores of several directories or providers).
    var others: [String: SealKeys] = [:]

    func keys(_ name: Name) -> SealKeys? {
      if firstName?.token === name.token { return firstKeys }
      return others.isEmpty ? nil : others[name.text]
    }

    mutating func keep(_ name: Name, _ keys: SealKeys) {
      if firstName == nil {
        firstName = name
        firstKeys = keys
      } else {
        others[name.text] = keys
      }
    }
  }

  /// The thread-specific slot that holds, while a scope runs on a thread, the address of its
  /// ``Kept`` (in `run`'s frame); `nil` outside a scope. Created once per process.
  private static let slot: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed (\(status)): no thread-specific slot")
    return key
  }()

  /// Whether a scope runs on this thread.
  static var isActive: Bool { pthread_getspecific(slot) != nil }

  /// Runs `body` inside a scope: the current one, or a new one for its duration.
  ///
  /// - Complexity: O(1) besides `body`.
  static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
    -> Result
  {
    if pthread_getspecific(slot) != nil { return try body() }
    var kept = Kept()
    return try withUnsafeMutablePointer(to: &kept) { (address) throws(Failure) -> Result in
      pthread_setspecific(slot, address)
      defer { pthread_setspecific(slot, nil) }
      return try body()
    }
  }

  /// The keys named `name` that this scope kept (its first load of that name), or `nil` (none
  /// yet, or outside a scope).
  ///
  /// - Complexity: O(1): one comparison of the name with the scope's first.
  static func kept(named name: Name) -> SealKeys? {
    guard let address = pthread_getspecific(slot) else { return nil }
    return address.assumingMemoryBound(to: Kept.self).pointee.keys(name)
  }

  /// The keys named `name` kept in this scope, else `candidate()`'s (kept for the rest of the
  /// scope when there are some); outside a scope, `candidate()`'s. For a caller that has keys
  /// at hand without loading (``ResolvedSealKeys``) and loads only when it has none.
  ///
  /// - Complexity: O(1): one comparison of the name with the scope's first, besides
  ///   `candidate`.
  static func keys(named name: Name, ifNoneKept candidate: () -> SealKeys?) -> SealKeys? {
    guard let address = pthread_getspecific(slot) else { return candidate() }
    let kept = address.assumingMemoryBound(to: Kept.self)
    if let earlier = kept.pointee.keys(name) { return earlier }
    guard let keys = candidate() else { return nil }
    if let earlier = kept.pointee.keys(name) { return earlier }
    kept.pointee.keep(name, keys)
    return keys
  }

  /// The keys named `name` (a provider's, for one store directory): those loaded first in this
  /// scope, or `load()`'s (kept for the rest of the scope). Outside a scope, `load()`'s.
  ///
  /// - Throws: What `load` throws (nothing is kept then).
  /// - Complexity: O(1): one comparison of the name with the scope's first, besides `load`.
  static func keys(
    named name: Name, load: () throws(StoreError) -> SealKeys
  ) throws(StoreError) -> SealKeys {
    guard let address = pthread_getspecific(slot) else { return try load() }
    let kept = address.assumingMemoryBound(to: Kept.self)
    if let earlier = kept.pointee.keys(name) { return earlier }
    // `load` runs on this thread and keeps nothing in the scope itself; whatever it kept (a
    // nested load of the same name) wins, as the first load of the scope.
    let loaded = try load()
    if let earlier = kept.pointee.keys(name) { return earlier }
    kept.pointee.keep(name, loaded)
    return loaded
  }
}
