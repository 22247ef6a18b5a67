/// The gate's answer to "may this cache be used offline now?": a value, never an error.
///
/// A store failure is a refusal that carries the typed error: the gate fails closed and keeps
/// the evidence (<doc:Rules#Fail-closed>).
public struct OfflineAccessDecision: Sendable, Hashable {
  /// `fresh` (use the cache), `expired` (ask for an online sign-in; the data is kept) or
  /// `unavailable` (nothing is cached).
  public let status: EligibilityStatus
  /// Every reason that applies; empty unless ``status`` is `expired`.
  public let reasons: EligibilityReasons
  /// The time this decision was made at: the wall clock read at the call, or, while a server
  /// anchor holds, the trusted time (``trustedTime`` has both).
  public let now: WallClockInstant
  /// For `fresh`, the last instant at which the cache is still fresh by age (oldest `writtenAt` +
  /// max age); `nil` otherwise or when not representable.
  public let deadline: WallClockInstant?
  /// The clock mark stored after this decision (`nil` when no readable mark exists).
  public let mark: WallClockInstant?
  /// The clock mark read before this decision's observation (`nil` when none was readable).
  public let previousMark: WallClockInstant?
  /// The mark record's generation (incremented by each online sign-in), when readable.
  public let generation: UInt64?
  /// The item count and the oldest and newest `writtenAt`; `nil` when the items could not be
  /// summarized (see ``cacheError``).
  public let items: ItemTimeSummary?
  /// The mark store's failure behind `mark_missing`, `mark_unreadable` or `mark_not_persisted`.
  public let markError: ClockMarkStoreError?
  /// The item store's failure behind `item_unreadable`.
  public let cacheError: CacheStoreError?
  /// The boot-clock floor after this decision's observation (<doc:Rules#Boot-clock-floor>), when a record was
  /// read; the reader carries it forward to check its deadline against `max(wall, L)`.
  public let floor: BootClockFloor?
  /// The floor layer's verdict (the floor `L`, the tolerance, the effective time and which clock
  /// set it), when the policy uses the floor and a record was read.
  public let floorCheck: BootClockFloorCheck?
  /// What the server anchor and the TPM contributed (the trusted time used, the wall clock's
  /// offset from it, which clock carried it, a TPM refusal); `nil` when the store has no trusted
  /// time and no TPM is configured.
  public let trustedTime: TrustedTimeVerdict?

  /// Creates a decision (gates build these; public for test doubles and other front ends).
  ///
  /// - Parameters: One per property.
  public init(
    status: EligibilityStatus, reasons: EligibilityReasons, now: WallClockInstant,
    deadline: WallClockInstant?, mark: WallClockInstant?, previousMark: WallClockInstant?,
    generation: UInt64?, items: ItemTimeSummary?, markError: ClockMarkStoreError? = nil,
    cacheError: CacheStoreError? = nil, floor: BootClockFloor? = nil,
    floorCheck: BootClockFloorCheck? = nil, trustedTime: TrustedTimeVerdict? = nil
  ) {
    self.trustedTime = trustedTime
    self.status = status
    self.reasons = reasons
    self.now = now
    self.deadline = deadline
    self.mark = mark
    self.previousMark = previousMark
    self.generation = generation
    self.items = items
    self.markError = markError
    self.cacheError = cacheError
    self.floor = floor
    self.floorCheck = floorCheck
  }

  /// Whether the cache may be used offline.
  public var isFresh: Bool { status == .fresh }
}
