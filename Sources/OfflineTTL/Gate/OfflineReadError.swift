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
      case tpmUnavailable = "tpm_unavailable"
      case tpmChanged = "tpm_changed"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The wall clock is past the deadline of the decision the reader was opened with.
    public static let deadlinePassed = Code(.deadlinePassed)
    /// The wall clock went behind the clock mark after the reader was opened.
    public static let clockBehindMark = Code(.clockBehindMark)
    /// The mark record could not be read to check the clock; see ``OfflineReadError/storeError``.
    public static let markUnreadable = Code(.markUnreadable)
    /// The item could not be read; see ``OfflineReadError/storeError``.
    public static let itemUnreadable = Code(.itemUnreadable)
    /// The item's own `writtenAt` is older than the decision allowed: before the oldest item the
    /// decision judged, or more than the max age before now (an older copy of the item was put
    /// in place behind the index). The reason gives the item's own time.
    public static let tooOld = Code(.tooOld)
    /// The configured TPM could not be read to check the time.
    public static let tpmUnavailable = Code(.tpmUnavailable)
    /// The TPM is not the one the record was written with.
    public static let tpmChanged = Code(.tpmChanged)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// Why the read was refused.
  public let code: Code
  /// The store's error as the store threw it: the mark store's for `mark_unreadable`, the item
  /// store's for `item_unreadable`.
  public let storeError: StoreError?
  /// A sentence for people.
  public let reason: String

  init(
    _ backing: Code.Backing, markError: StoreError? = nil, cacheError: StoreError? = nil,
    reason: String
  ) {
    self.code = Code(backing)
    self.storeError = markError ?? cacheError
    self.reason = reason
  }

  /// ``storeError`` for `mark_unreadable`, else `nil`.
  public var markError: StoreError? { code == .markUnreadable ? storeError : nil }
  /// ``storeError`` for `item_unreadable`, else `nil`.
  public var cacheError: StoreError? { code == .itemUnreadable ? storeError : nil }

  /// The matching eligibility reason (`too_old` for a passed deadline).
  public var eligibilityReason: EligibilityReasons {
    switch code.backing {
    case .deadlinePassed: .tooOld
    case .clockBehindMark: .clockBehindMark
    case .markUnreadable: .markUnreadable
    case .itemUnreadable: .itemUnreadable
    case .tooOld: .tooOld
    case .tpmUnavailable: .tpmUnavailable
    case .tpmChanged: .tpmChanged
    }
  }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
