import Foundation

/// The front door: decides whether a cache may be used offline, opens it read-only, and hands
/// the only writer to an online sign-in.
///
/// ```swift
/// let gate = OfflineAccessGate(
///   cache: DirectoryCacheStore(atPath: directory), marks: FileClockMarkStore(atPath: directory),
///   policy: try EligibilityPolicy(maxAge: .seconds(7 * 86_400)))
/// switch gate.openOffline() {                       // rechecks now
/// case .opened(let reader): show(try reader.item(forKey: key))
/// case .refused(let decision): askForSignIn(decision.reasons)
/// }
/// // After the server authenticated the user: sign in and write in one step (the only place
/// // items are written; a concurrent sign-in elsewhere never makes it fail as superseded).
/// try gate.beginOnlineSession(writing: [(key, data)])
/// ```
///
/// Every call reads its clocks when it is made, never at construction, and only through
/// ``clocks``; a reading compared with a clock mark is taken under the mark store's lock or after
/// the stored mark was read (each method says which). The gate
/// holds no state of its own: any number of gates, threads and processes may share one store.
///
/// **Threads.** The gate, ``DirectoryCacheStore`` and ``FileClockMarkStore`` are `Sendable`
/// values: one value, and its copies, may be used from any number of threads at once. Each
/// operation takes the store's `flock` through a descriptor of its own (threads exclude each
/// other as processes do), and what a long-lived store keeps between operations (open
/// descriptors, its change watch) is behind a lock of its own. Every call blocks its thread on
/// `flock`, at most the store's `lockTimeout` (30 seconds by default; past it the call is refused
/// with ``StoreError/Code/lockTimedOut``), and on `fdatasync`; from Swift concurrency use the
/// `async` variants. A long-lived store value holds one inotify instance per store directory
/// (shared by the item and mark stores of that directory), of the 128 a user may hold by
/// default; where none can be had the stores read their files again at every check.
/// No offline path (``checkEligibility()``, ``openOffline()``, ``recordObservation()``,
/// ``OfflineCacheReader``) deletes, rewrites or re-stamps an item
/// (<doc:Rules#Never-delete-on-expiry>).
public struct OfflineAccessGate: Sendable {
  /// Where the items live.
  public let cache: any CacheItemStore
  /// Where the clock mark lives.
  public let marks: any ClockMarkStore
  /// Max age and the gate's options.
  public let policy: EligibilityPolicy
  /// Every clock the gate, its readers and its sessions read, through named reads only
  /// (``Clocks/readForDecision()``, ``Clocks/readForSignIn()``, ``Clocks/readForItemStamp()``).
  /// The boot clock carries the floor forward (<doc:Rules#Boot-clock-floor>); its reading goes
  /// into every observation, refused or not, even when the policy turns the floor check off (the
  /// record's floor then stays current).
  public let clocks: Clocks
  /// Whether a store of this gate may load a sealing key, so that a check needs the scope that
  /// keeps the first key it loads (the items and the mark judged under one key): `false` only
  /// when both stores are known to have none (an unsealed ``DirectoryCacheStore`` and an
  /// unsealed ``FileClockMarkStore``, or stores whose types never load one). A store of any
  /// other type (one that wraps a sealed store, say) keeps the scope.
  let mayLoadSealingKeys: Bool

  /// Creates a gate.
  ///
  /// - Parameters:
  ///   - cache: The item store, for example ``DirectoryCacheStore``.
  ///   - marks: The clock-mark store, usually in the same directory as the items.
  ///   - policy: Max age and options (`trustOnFirstUse` is off by default).
  ///   - clocks: The wall and boot clocks.
  public init(
    cache: any CacheItemStore, marks: any ClockMarkStore, policy: EligibilityPolicy,
    clocks: Clocks
  ) {
    let (conflict, sharing) = Self.sealing(cache: cache, marks: marks)
    self.cache = cache
    self.marks = sharing ?? marks
    self.policy = policy
    self.clocks = clocks
    self.mayLoadSealingKeys = Self.mayLoadSealingKeys(cache) || Self.mayLoadSealingKeys(marks)
    self.sealingConflict = conflict
  }

  /// The refusal of a pair of stores sealed differently, when this gate was given one: a
  /// ``DirectoryCacheStore`` and a ``FileClockMarkStore`` of which only one is sealed, or that
  /// are sealed by providers of two different keys (two key files, a key file and a keyring
  /// key, two keyring keys), as their ``SealingKeyProvider/keyIdentity()`` says when the gate is
  /// made. Two providers of one key spelt differently are alike: `keys/k`, `keys/./k`,
  /// `keys//k` and a path through a symbolic link to the same directory name one key file, and
  /// two keyring providers with the same application id and key name one secret. A sealed item
  /// index is bound to a mark record sealed with the same key, so every check of a pair sealed
  /// differently would refuse `seal_mismatch`, and no sign-in could cure it. Instead every
  /// operation of the gate refuses with this error, code
  /// ``StoreError/Code/storesSealedDifferently``, before it reads or writes anything:
  /// ``checkEligibility()`` (and ``openOffline()``, ``verifyItems(against:)``) answers `expired`
  /// with reason `seal_mismatch` and this error as both stores' error, every
  /// `beginOnlineSession` throws it as `cache_store_failed`, and ``recordObservation()`` throws
  /// it. `nil` when the stores agree (both unsealed, or sealed by providers of one key) and for
  /// store types the gate cannot look into. Check it at startup to report a configuration
  /// error early.
  ///
  /// When the two providers name one key in different words, the gate's ``marks`` is the given
  /// mark store set to share the item store's key within each operation (a sign-in seals its
  /// items and the mark reset of its commit point with one key, and a check verifies both with
  /// one key, even if the key file is replaced meanwhile); its ``FileClockMarkStore/sealing``
  /// is still the provider it was given.
  ///
  /// - Complexity: Computed once, at construction: one ``SealingKeyProvider/keyIdentity()`` per
  ///   sealed store (for a key file, one `realpath(3)` of its directory).
  public let sealingConflict: StoreError?

  /// The refusal of `cache` and `marks` sealed differently (see ``sealingConflict``), and, for
  /// two providers of one key that describe themselves differently, `marks` set to share the
  /// item store's key in an operation's scope (`nil` when nothing is to be shared).
  private static func sealing(cache: any CacheItemStore, marks: any ClockMarkStore)
    -> (conflict: StoreError?, sharing: FileClockMarkStore?)
  {
    guard let items = cache as? DirectoryCacheStore, let mark = marks as? FileClockMarkStore
    else { return (nil, nil) }
    switch (items.sealing, mark.sealing) {
    case (nil, nil):
      return (nil, nil)
    case (let itemSeal?, let markSeal?) where itemSeal.keyIdentity() == markSeal.keyIdentity():
      guard "\(itemSeal)" != "\(markSeal)" else { return (nil, nil) }
      // One key named two ways: the mark store's scope name is built from the item store's
      // provider, so that both stores of one directory keep one key per operation (the scope
      // names a key by its provider's description and the store directory).
      var sharing = mark
      sharing.sealingScopeName = SealingKeyScope.Name(itemSeal, directory: mark.directoryPath)
      return (nil, sharing)
    default:
      func sealed(_ provider: (any SealingKeyProvider)?) -> String {
        guard let provider else { return "not sealed" }
        let identity = provider.keyIdentity()
        let shown = "\(provider)"
        return "sealed with the \(shown)"
          + (identity.description == shown ? "" : " (\(identity))")
      }
      let conflict = StoreError(
        code: .storesSealedDifferently,
        message: "the item store in \(items.directory) is \(sealed(items.sealing)), but the"
          + " clock-mark store in \(mark.directoryPath) is \(sealed(mark.sealing)): a sealed item"
          + " index is bound to a mark record sealed with the same key, so give both stores the"
          + " same provider (or neither); nothing was read or written")
      return (conflict, nil)
    }
  }

  /// Whether `store` may load a sealing key: `false` only for an unsealed store of the two types
  /// that load keys (the only callers of the key scope), `true` for any other store, since it
  /// may forward to one of those.
  private static func mayLoadSealingKeys(_ store: any CacheItemStore) -> Bool {
    guard let directory = store as? DirectoryCacheStore else { return true }
    return directory.sealing != nil
  }

  /// Whether `store` may load a sealing key (see the item store's overload).
  private static func mayLoadSealingKeys(_ store: any ClockMarkStore) -> Bool {
    guard let file = store as? FileClockMarkStore else { return true }
    return file.sealing != nil
  }

  /// Creates a gate from a wall clock and a boot clock.
  ///
  /// - Parameters:
  ///   - cache: The item store, for example ``DirectoryCacheStore``.
  ///   - marks: The clock-mark store, usually in the same directory as the items.
  ///   - policy: Max age and options (`trustOnFirstUse` is off by default).
  ///   - clock: The wall clock; the system clock by default.
  ///   - bootClock: The boot clock; ``LinuxBootClock`` by default (whose readings are `nil`
  ///     off Linux: with the floor on, decisions are then refused with `boot_clock_unavailable`).
  ///   - tpmClock: The TPM clock, or `nil` (the default) for none (see ``Clocks/tpm``).
  public init(
    cache: any CacheItemStore, marks: any ClockMarkStore, policy: EligibilityPolicy,
    clock: any WallClock = SystemWallClock(),
    bootClock: (any BootClock)? = LinuxBootClock(),
    tpmClock: (any TPMClock)? = nil
  ) {
    self.init(
      cache: cache, marks: marks, policy: policy,
      clocks: Clocks(wall: clock, boot: bootClock, tpm: tpmClock))
  }

  /// Re-evaluates now and, when fresh, opens the cache read-only
  /// (<doc:Rules#Recheck-at-open-and-at-each-read>). A decision made earlier (a login screen's) is
  /// never reused.
  ///
  /// - Returns: `.opened` with a reader bounded by this decision's deadline, or `.refused`
  ///   with the decision.
  /// - Complexity: As ``checkEligibility()``.
  ///
  /// Blocks the calling thread on `flock` and `fdatasync` as ``checkEligibility()`` does; from
  /// Swift concurrency use ``openOfflineAsync()``.
  public func openOffline() -> OfflineOpenResult {
    let decision = checkEligibility()
    guard decision.isFresh else { return .refused(decision) }
    return .opened(OfflineCacheReader(gate: self, decision: decision))
  }

  /// Advances the clock mark to the wall clock now, and nothing else; call it at launch and when
  /// coming to the foreground so that more time is seen.
  ///
  /// - Returns: The record before and after.
  /// - Throws: ``ClockMarkStoreError`` (for example `absent` before the first online sign-in);
  ///   nothing is created or deleted.
  ///
  /// The clocks are read under the mark store's lock. Blocks the calling thread on `flock` and
  /// `fdatasync`; from Swift concurrency use ``recordObservationAsync()``.
  @discardableResult
  public func recordObservation() throws(ClockMarkStoreError) -> ClockMarkTransition {
    if let sealingConflict { throw sealingConflict }
    return try marks.observe(
      resolution: policy.markResolution, readingClocks: { clocks.readForDecision() })
  }

  /// Starts an online session: call it only after the app's server sign-in succeeded. Resets
  /// the mark to the wall clock now (even below the old mark: the recovery after a fast clock
  /// was corrected), in a new generation, under the cache's writer lock so that no older
  /// session's write can interleave. Items are kept, except those a read would refuse: the
  /// sign-in also repairs the item store (for ``DirectoryCacheStore``: every item is judged as
  /// a read judges it before the commit point, and after it the ones a read would refuse and
  /// the entries that are not items are removed and the index is rebuilt), so a sign-in without
  /// writes recovers the store too.
  ///
  /// The clocks are read under the mark store's lock (``Clocks/readForSignIn()`` handed to
  /// ``ClockMarkStore/resetAfterOnlineSignIn(readingClocks:)``), so the mark and floor it writes
  /// are never older than a record another process wrote before it.
  ///
  /// - Returns: The session, the only type that can write, replace or delete items.
  /// - Throws: ``OnlineSessionError`` when the mark cannot be reset or the store cannot be
  ///   opened or locked (`insecure_store` for a store another user can write); nothing is
  ///   written then.
  ///
  /// A session writes only while it is the newest: when another process (or another gate)
  /// signs in after it, its later writes throw `superseded` and write nothing. Where several
  /// copies of an app may sign in at once, sign in and write in one step with
  /// ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``, which never fails for losing
  /// that race.
  ///
  /// Blocks the calling thread on `flock` (the cache's writer lock, then the mark's) and
  /// `fdatasync`; from Swift concurrency use ``beginOnlineSessionAsync()``.
  public func beginOnlineSession() throws(OnlineSessionError) -> OnlineSession {
    try beginOnlineSession(anchor: nil, writing: [], stamp: nil)
  }

  /// Signs in and writes items in one atomic step: the mark reset and the new items become
  /// visible together or not at all, across crashes (with ``DirectoryCacheStore``; the
  /// protocol is in `docs/sign-in-protocol.md`). Call it only after the app's server sign-in
  /// succeeded. Concurrent sign-ins serialize: each one commits, in its own generation, and the
  /// later one's items win for a key both wrote; none fails for losing the race.
  ///
  /// - Parameter items: Keys and bytes, all stamped with the wall clock read under the cache's
  ///   writer lock, just before they are staged (``Clocks/readForItemStamp()``): a sign-in that
  ///   waited for another one stamps its items after that one's mark, never before it. The reset
  ///   reads the clocks again, under the mark lock, so the new mark is never earlier. A later
  ///   duplicate key wins; items not named are kept.
  /// - Returns: The session (for later writes in this generation); its ``OnlineSession/record``
  ///   holds the new mark and ``OnlineSession/signInWrittenAt`` the items' `writtenAt`.
  /// - Throws: ``OnlineSessionError`` (`mark_store_failed`, `cache_store_failed`); when it is
  ///   thrown before the commit point, the previous mark, generation and items are intact.
  /// - Complexity: O(b + k) for b bytes of the old items carried (each is read once, judged as a
  ///   read judges it) and k written items; a constant number of syncs.
  @discardableResult
  public func beginOnlineSession(writing items: some Sequence<(CacheItemKey, Data)>)
    throws(OnlineSessionError) -> OnlineSession
  {
    try beginOnlineSession(anchor: nil, writing: Array(items), stamp: nil)
  }

  /// Signs in and writes an array of items in one atomic step: the same as the variant that
  /// takes any sequence (``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)``). This
  /// overload lets an array literal with string-literal keys be written in place,
  /// `gate.beginOnlineSession(writing: [("token", data)])`, where the sequence alone would read
  /// the literal as an array of `(String, Data)`.
  ///
  /// - Parameter items: Keys and bytes, stamped as the sequence variant stamps them (the wall
  ///   clock read under the cache's writer lock); a later duplicate key wins; items not named
  ///   are kept.
  /// - Returns: The session; ``OnlineSession/signInWrittenAt`` holds the items' `writtenAt`.
  /// - Throws: ``OnlineSessionError``, as the sequence variant.
  /// - Complexity: As the sequence variant: O(b + k) for b bytes of old items carried and k
  ///   written items; a constant number of syncs.
  @discardableResult
  public func beginOnlineSession(writing items: [(CacheItemKey, Data)])
    throws(OnlineSessionError) -> OnlineSession
  {
    try beginOnlineSession(anchor: nil, writing: items, stamp: nil)
  }

  /// Starts an online session anchored at a server time: the time the app obtained over its
  /// authenticated connection (the `Date` of its TLS response, or a signed token's issue time),
  /// with how far off it may be (half the round trip, say).
  ///
  /// From then on, while the anchor holds, decisions use trusted time: `serverTime + elapsed −
  /// uncertainty − (2 s + 500 ppm × elapsed)`, elapsed on the boot clock within this boot and on
  /// the TPM clock (``Clocks/tpm``) across reboots. The wall clock no longer decides age or
  /// rollback; its offset from trusted time is reported
  /// (``OfflineAccessDecision/trustedTime``). Items written in the session are stamped with
  /// trusted time. When the anchor stops holding (another boot without a TPM), the mark rule and
  /// the floor decide again, with the floor at the last trusted time.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time.
  ///   - uncertainty: How far off it may be; zero or more.
  /// - Returns: The session.
  /// - Throws: ``OnlineSessionError``: as ``beginOnlineSession()``, `invalid_server_time` for a
  ///   negative uncertainty, `tpm_unavailable` when a configured TPM cannot be read; nothing is
  ///   written then.
  public func beginOnlineSession(serverTime: WallClockInstant, uncertainty: Duration)
    throws(OnlineSessionError) -> OnlineSession
  {
    guard uncertainty >= .zero else {
      throw OnlineSessionError(
        .invalidServerTime,
        reason: "the server time's uncertainty must be zero or more, got \(uncertainty)")
    }
    return try beginOnlineSession(anchor: (serverTime, uncertainty), writing: [], stamp: nil)
  }

  /// Signs in anchored at a server time and writes items, in one atomic step: as
  /// ``beginOnlineSession(writing:)-(Sequence<(CacheItemKey,Data)>)`` (the mark reset, the anchor
  /// and the new items become visible together or not at all), with the anchor of
  /// ``beginOnlineSession(serverTime:uncertainty:)``.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time.
  ///   - uncertainty: How far off it may be; zero or more.
  ///   - items: Keys and bytes, all stamped with the trusted time at the anchor:
  ///     `serverTime − uncertainty − 2 s` (the drift allowance's fixed part; its 500 ppm part is
  ///     zero at the anchor), whatever the wall clock says. A later duplicate key wins; items not
  ///     named are kept.
  /// - Returns: The session; ``OnlineSession/signInWrittenAt`` holds the items' `writtenAt`.
  /// - Throws: ``OnlineSessionError``: `invalid_server_time` for a negative uncertainty,
  ///   `tpm_unavailable` when a configured TPM cannot be read (before or under the lock),
  ///   `mark_store_failed`, `cache_store_failed`; nothing is written then.
  /// - Complexity: O(b + k) for b bytes of the old items carried (each is read once, judged as a
  ///   read judges it) and k written items; a constant number of syncs.
  @discardableResult
  public func beginOnlineSession(
    serverTime: WallClockInstant, uncertainty: Duration,
    writing items: some Sequence<(CacheItemKey, Data)>
  ) throws(OnlineSessionError) -> OnlineSession {
    guard uncertainty >= .zero else {
      throw OnlineSessionError(
        .invalidServerTime,
        reason: "the server time's uncertainty must be zero or more, got \(uncertainty)")
    }
    let stamp = serverTime.saturatingAdvanced(by: .zero - uncertainty - TrustedTime.fixedAllowance)
    return try beginOnlineSession(
      anchor: (serverTime, uncertainty), writing: Array(items), stamp: stamp)
  }

  /// Signs in anchored at a server time and writes an array of items, in one atomic step: the
  /// same as the variant that takes any sequence
  /// (``beginOnlineSession(serverTime:uncertainty:writing:)-(_,_,Sequence<(CacheItemKey,Data)>)``).
  /// This overload lets an array literal with string-literal keys be written in place (`writing:
  /// [("token", data)]`).
  ///
  /// - Parameters:
  ///   - serverTime: The server's time.
  ///   - uncertainty: How far off it may be; zero or more.
  ///   - items: Keys and bytes, all stamped with the trusted time at the anchor
  ///     (`serverTime − uncertainty − 2 s`); a later duplicate key wins; items not named are
  ///     kept.
  /// - Returns: The session; ``OnlineSession/signInWrittenAt`` holds the items' `writtenAt`.
  /// - Throws: ``OnlineSessionError``, as the sequence variant.
  /// - Complexity: As the sequence variant.
  @discardableResult
  public func beginOnlineSession(
    serverTime: WallClockInstant, uncertainty: Duration, writing items: [(CacheItemKey, Data)]
  ) throws(OnlineSessionError) -> OnlineSession {
    try beginOnlineSession(serverTime: serverTime, uncertainty: uncertainty, writing: items[...])
  }

  /// The time an online session stamps on the items it writes: the wall clock, or, in a session
  /// that began with a server time, the trusted time carried from the stored record to now (the
  /// stored record read first, the clocks after it). Read under the cache's writer lock (in the
  /// commit's `prepare`), so that a write that waited for another one is not stamped before it.
  ///
  /// - Parameter anchored: Whether the session's sign-in anchored trusted time.
  /// - Returns: The stamp.
  func itemStampTime(anchored: Bool) -> WallClockInstant {
    guard anchored, let stored = try? marks.read(), stored.trustedTime?.isAnchored == true else {
      return clocks.readForItemStamp()
    }
    let reading = clocks.readForDecision()
    return stored.observing(reading).effectiveNow(wall: reading.wall)
  }

  /// The sign-in: `items` staged, the mark reset (anchored at a server time, or not) as the
  /// commit point.
  ///
  /// - Parameters:
  ///   - anchor: The server time and its uncertainty, or `nil`.
  ///   - items: The items to write (a later duplicate key wins).
  ///   - stamp: Their fixed `writtenAt` (trusted time at the anchor), or `nil` to stamp them
  ///     with the wall clock read under the cache's writer lock, after the stored generation was
  ///     read and before they are staged.
  private func beginOnlineSession(
    anchor: (WallClockInstant, Duration)?, writing items: [(CacheItemKey, Data)],
    stamp: WallClockInstant?
  ) throws(OnlineSessionError) -> OnlineSession {
    if let sealingConflict { throw OnlineSessionError(cacheError: sealingConflict) }
    if let tpm = clocks.tpm {
      // Checked before anything is staged; a failure under the lock is refused by the mark
      // store's reset, which then writes nothing (so the items are not committed either).
      do throws(TPMClockError) {
        _ = try tpm.now()
      } catch {
        throw OnlineSessionError(.tpmUnavailable, reason: error.description)
      }
    }
    do throws(StoreError) {
      // What the reset could never repair (a lock file or store directory of another user) is
      // refused here, before the item store stages anything.
      try marks.checkBeforeOnlineSignIn()
    } catch {
      throw OnlineSessionError(markError: error)
    }
    var reset: Result<ClockMarkRecord, StoreError>?
    var tpmError: TPMClockError?
    var writtenAt: WallClockInstant?
    do {
      _ = try cache.commitSignIn(
        preparing: {
          var changes = CacheChanges()
          guard !items.isEmpty else { return changes }
          let now = stamp ?? clocks.readForItemStamp()
          for (key, payload) in items { changes.write(key, payload, writtenAt: now) }
          writtenAt = now
          return changes
        },
        storedGeneration: { () throws(StoreError) in try marks.generationForSignIn() },
        commitPoint: {
          let result = Result { () throws(StoreError) in
            try marks.resetAfterOnlineSignIn(readingClocks: {
              var observation = clocks.readForSignIn()
              tpmError = observation.tpmError
              if let (serverTime, uncertainty) = anchor {
                observation.serverAnchor = try? TrustedTimeAnchor(
                  serverTime: serverTime, uncertainty: uncertainty, boot: observation.boot,
                  tpm: observation.tpm)
              }
              return observation
            })
          }
          reset = result
          if case .success = result { return true }
          return false
        })
    } catch {
      if case .success(let record) = reset {
        // Committed: the store reports a failure of its roll forward, which the next sign-in
        // finishes; readers already see the new set, and the session is valid. The failure is
        // kept on the session, for the caller to report.
        return OnlineSession(
          gate: self, record: record, signInWrittenAt: writtenAt, unfinishedRollForward: error)
      }
      throw OnlineSessionError(cacheError: error)
    }
    switch reset {
    case .success(let record):
      return OnlineSession(gate: self, record: record, signInWrittenAt: writtenAt)
    case .failure(let error):
      if let tpmError, error.code == .clockUnreadable {
        // The TPM answered just before but not under the lock: the reset refused, nothing
        // was written or committed.
        throw OnlineSessionError(.tpmUnavailable, reason: tpmError.description)
      }
      throw OnlineSessionError(markError: error)
    case nil:
      throw OnlineSessionError(
        cacheError: StoreError(code: .lockFailed, message: "the store ran no sign-in step"))
    }
  }
}

/// The result of ``OfflineAccessGate/openOffline()``.
public enum OfflineOpenResult: Sendable {
  /// The cache is fresh: a read-only reader, bounded by the decision's deadline.
  case opened(OfflineCacheReader)
  /// The cache may not be used offline now; the decision says why.
  case refused(OfflineAccessDecision)

  /// The decision made at open, whichever way it went.
  public var decision: OfflineAccessDecision {
    switch self {
    case .opened(let reader): reader.decision
    case .refused(let decision): decision
    }
  }
}
