/// An ``OfflineCacheReader`` refused a read. Nothing was changed.
public struct OfflineReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Why the read was refused.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case deadlinePassed = "deadline_passed"
      case clockBehindMark = "clock_behind_mark"
      case markUnreadable = "mark_unreadable"
      case itemUnreadable = "item_unreadable"
      case tooOld = "too_old"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The wall clock is past the deadline of the decision the reader was opened with.
    public static let deadlinePassed = Code(.deadlinePassed)
    /// The wall clock went behind the clock mark after the reader was opened.
    public static let clockBehindMark = Code(.clockBehindMark)
    /// The mark record could not be read to check the clock; see ``OfflineReadError/markError``.
    public static let markUnreadable = Code(.markUnreadable)
    /// The item could not be read; see ``OfflineReadError/cacheError``.
    public static let itemUnreadable = Code(.itemUnreadable)
    /// The item's own `writtenAt` is older than the decision allowed: before the oldest item the
    /// decision judged, or more than the max age before now (an older copy of the item was put
    /// in place behind the index). The reason gives the item's own time.
    public static let tooOld = Code(.tooOld)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// Why the read was refused.
  public let code: Code
  /// The mark store's error, for `mark_unreadable`.
  public let markError: ClockMarkStoreError?
  /// The item store's error, for `item_unreadable`.
  public let cacheError: CacheStoreError?
  /// A sentence for people.
  public let reason: String

  init(
    _ backing: Code.Backing, markError: ClockMarkStoreError? = nil,
    cacheError: CacheStoreError? = nil, reason: String
  ) {
    self.code = Code(backing)
    self.markError = markError
    self.cacheError = cacheError
    self.reason = reason
  }

  /// The matching eligibility reason (`too_old` for a passed deadline).
  public var eligibilityReason: EligibilityReasons {
    switch code.backing {
    case .deadlinePassed: .tooOld
    case .clockBehindMark: .clockBehindMark
    case .markUnreadable: .markUnreadable
    case .itemUnreadable: .itemUnreadable
    case .tooOld: .tooOld
    }
  }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
