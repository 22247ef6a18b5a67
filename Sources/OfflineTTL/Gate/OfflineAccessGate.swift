/// The front door: decides whether a cache may be used offline, opens it read-only, and hands
/// the only writer to an online sign-in.
///
/// ```swift
/// let gate = OfflineAccessGate(
///   cache: DirectoryCacheStore(at: dir), marks: FileClockMarkStore(at: dir),
///   policy: try EligibilityPolicy(maxAge: .seconds(7 * 86_400)))
/// switch gate.openOffline() {                       // rechecks now
/// case .opened(let reader): show(try reader.item(forKey: key))
/// case .refused(let decision): askForSignIn(decision.reasons)
/// }
/// let session = try gate.beginOnlineSession()       // after the server authenticated the user
/// try session.write(key, data)                      // the only place items are written
/// ```
///
/// Every call reads the wall clock when it is made, never at construction. The gate
/// holds no state of its own: any number of gates, threads and processes may share one store.
/// No offline path (``checkEligibility()``, ``openOffline()``, ``recordObservation()``,
/// ``OfflineCacheReader``) deletes, rewrites or re-stamps an item (<doc:Rules#Never-delete-on-expiry>).
public struct OfflineAccessGate: Sendable {
  /// Where the items live.
  public let cache: any CacheItemStore
  /// Where the clock mark lives.
  public let marks: any ClockMarkStore
  /// Max age and the gate's options.
  public let policy: EligibilityPolicy
  /// The wall clock ("now").
  public let clock: any WallClock
  /// The boot clock that carries the floor forward (<doc:Rules#Boot-clock-floor>), or `nil` for none. Its
  /// reading goes into every observation, refused or not, even when the policy turns the floor
  /// check off (the record's floor then stays current).
  public let bootClock: (any BootClock)?
  /// The TPM 2.0 clock that carries the floor and trusted time across reboots, or `nil` for
  /// none. When set, every observation reads it under the mark store's lock, and a TPM that
  /// cannot be read or is not the recorded one is a refusal (`tpm_unavailable`, `tpm_changed`),
  /// never a silent fallback.
  public let tpmClock: (any TPMClock)?

  /// Creates a gate.
  ///
  /// - Parameters:
  ///   - cache: The item store, for example ``DirectoryCacheStore``.
  ///   - marks: The clock-mark store, usually in the same directory as the items.
  ///   - policy: Max age and options (`trustOnFirstUse` is off by default).
  ///   - clock: The wall clock; the system clock by default.
  ///   - bootClock: The boot clock; ``LinuxBootClock`` by default (whose readings are `nil`
  ///     off Linux, which leaves the floor where the last online sign-in put it).
  ///   - tpmClock: The TPM clock (`ESYSTPMClock` in the `OfflineTTLTPM` module, trait `TPM`),
  ///     or `nil` (the default) for none.
  public init(
    cache: any CacheItemStore, marks: any ClockMarkStore, policy: EligibilityPolicy,
    clock: any WallClock = SystemWallClock(),
    bootClock: (any BootClock)? = LinuxBootClock(),
    tpmClock: (any TPMClock)? = nil
  ) {
    self.cache = cache
    self.marks = marks
    self.policy = policy
    self.clock = clock
    self.bootClock = bootClock
    self.tpmClock = tpmClock
  }

  /// The observation this gate hands the mark store for a reading of the wall clock, with the
  /// boot clock read now, after the wall clock (for an online sign-in: the floor is anchored at
  /// a boot reading no earlier than its wall time, so it never overstates real time).
  func observation(at now: WallClockInstant) -> ClockObservation {
    observation(at: now, boot: bootClock?.now())
  }

  /// The observation for clocks already read. Offline decisions read the boot clock *before*
  /// the wall clock (``readClocks()``), so the floor is a lower bound on real time at `now`.
  func observation(at now: WallClockInstant, boot: BootClockReading?) -> ClockObservation {
    ClockObservation(wall: now, boot: boot, markResolution: policy.markResolution)
  }

  /// Reads the boot clock, then the wall clock (see ``observation(at:boot:)``).
  func readClocks() -> (now: WallClockInstant, boot: BootClockReading?) {
    let boot = bootClock?.now()
    return (clock.now(), boot)
  }

  /// The clocks read now, as an observation: what offline paths hand to
  /// ``ClockMarkStore/observe(readingClocks:)`` so that the reading happens under its lock.
  /// The TPM clock, when configured, is read too (a failure leaves it out; paths that decide use
  /// ``currentObservation(tpmError:)`` to refuse).
  func currentObservation() -> ClockObservation {
    var ignored: TPMClockError?
    return currentObservation(tpmError: &ignored)
  }

  /// ``currentObservation()``, reporting a TPM that could not be read.
  func currentObservation(tpmError: inout TPMClockError?) -> ClockObservation {
    let (now, boot) = readClocks()
    var observation = observation(at: now, boot: boot)
    observation.tpm = readTPM(error: &tpmError)
    return observation
  }

  /// The time an online session stamps on the items it writes: the wall clock, or, in a session
  /// that began with a server time, the trusted time carried from the stored record to now.
  ///
  /// - Parameter anchored: Whether the session's sign-in anchored trusted time.
  /// - Returns: The stamp.
  func itemStampTime(anchored: Bool) -> WallClockInstant {
    let wall = clock.now()
    guard anchored, let stored = try? marks.read(), stored.trustedTime?.isAnchored == true else {
      return wall
    }
    return effectiveNow(record: stored, wall: wall).0
  }

  /// One TPM reading, or `nil` (with `error` set when a configured TPM failed).
  func readTPM(error: inout TPMClockError?) -> TPMClockReading? {
    guard let tpmClock else { return nil }
    do throws(TPMClockError) {
      return try tpmClock.now()
    } catch let failure {
      error = failure
      return nil
    }
  }

  /// The effective time now for a record read earlier (in memory, nothing is written): the
  /// trusted time carried to the clocks now while its server anchor holds, else the wall clock.
  /// Used by the reader's recheck and to stamp items in an anchored session.
  ///
  /// - Parameters:
  ///   - record: The stored record.
  ///   - wall: The wall clock now.
  /// - Returns: The effective time, and the TPM's failure when a configured TPM could not be
  ///   read or is not the recorded one.
  func effectiveNow(record: ClockMarkRecord, wall: WallClockInstant)
    -> (WallClockInstant, TPMClockError?)
  {
    var tpmError: TPMClockError?
    let tpm = readTPM(error: &tpmError)
    let observation = ClockObservation(wall: wall, boot: bootClock?.now(), tpm: tpm)
    if tpmError == nil { tpmError = record.tpmChange(for: observation) }
    return (record.observing(observation).effectiveNow(wall: wall), tpmError)
  }

  /// Re-evaluates now and, when fresh, opens the cache read-only (<doc:Rules#Recheck-at-open-and-at-each-read>). A decision
  /// made earlier (a login screen's) is never reused.
  ///
  /// - Returns: `.opened` with a reader bounded by this decision's deadline, or `.refused`
  ///   with the decision.
  /// - Complexity: As ``checkEligibility()``.
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
  @discardableResult
  public func recordObservation() throws(ClockMarkStoreError) -> ClockMarkTransition {
    try marks.observe(readingClocks: currentObservation)
  }

  /// Starts an online session: call it only after the app's server sign-in succeeded. Resets
  /// the mark to the wall clock now (even below the old mark: the recovery after a fast clock
  /// was corrected), in a new generation, under the cache's writer lock so that no older
  /// session's write can interleave.
  ///
  /// - Returns: The session, the only type that can write, replace or delete items.
  /// - Throws: ``OnlineSessionError`` when the mark cannot be reset or the store cannot be
  ///   opened or locked; nothing is written then.
  public func beginOnlineSession() throws(OnlineSessionError) -> OnlineSession {
    try beginOnlineSession(anchor: nil)
  }

  /// Starts an online session anchored at a server time: the time the app obtained over its
  /// authenticated connection (the `Date` of its TLS response, or a signed token's issue time),
  /// with how far off it may be (half the round trip, say).
  ///
  /// From then on, while the anchor holds, decisions use trusted time: `serverTime + elapsed −
  /// uncertainty − (2 s + 500 ppm × elapsed)`, elapsed on the boot clock within this boot and on
  /// the TPM clock (``tpmClock``) across reboots. The wall clock no longer decides age or
  /// rollback; its offset from trusted time is reported. Items written in the session are
  /// stamped with trusted time. When the anchor stops holding (another boot without a TPM), the
  /// mark rule and the floor decide again, with the floor at the last trusted time.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time.
  ///   - uncertainty: How far off it may be; zero or more.
  /// - Returns: The session.
  /// - Throws: ``OnlineSessionError``: as ``beginOnlineSession()``, and `invalid_server_time`
  ///   for a negative uncertainty; nothing is written then.
  public func beginOnlineSession(serverTime: WallClockInstant, uncertainty: Duration)
    throws(OnlineSessionError) -> OnlineSession
  {
    guard uncertainty >= .zero else {
      throw OnlineSessionError(
        .invalidServerTime,
        reason: "the server time's uncertainty must be zero or more, got \(uncertainty)")
    }
    return try beginOnlineSession(anchor: (serverTime, uncertainty))
  }

  private func beginOnlineSession(anchor: (WallClockInstant, Duration)?)
    throws(OnlineSessionError) -> OnlineSession
  {
    let reset: Result<ClockMarkRecord, StoreError>
    var tpmError: TPMClockError?
    do {
      reset = try cache.withWriterLock {
        let now = clock.now()
        var observation = observation(at: now)
        observation.tpm = readTPM(error: &tpmError)
        if let (serverTime, uncertainty) = anchor {
          observation.serverAnchor = try? TrustedTimeAnchor(
            serverTime: serverTime, uncertainty: uncertainty, boot: observation.boot,
            tpm: observation.tpm)
        }
        guard tpmError == nil else {
          return .failure(StoreError(code: .storeUnusable, message: "TPM unavailable"))
        }
        return Result { () throws(StoreError) in
          try marks.resetAfterOnlineSignIn(observation)
        }
      }
    } catch {
      throw OnlineSessionError(cacheError: error)
    }
    if let tpmError {
      throw OnlineSessionError(.tpmUnavailable, reason: tpmError.description)
    }
    switch reset {
    case .success(let record): return OnlineSession(gate: self, record: record)
    case .failure(let error): throw OnlineSessionError(markError: error)
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
