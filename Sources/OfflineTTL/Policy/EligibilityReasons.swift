/// Every reason an evaluation was refused, as a fixed-size set (no heap allocation).
///
/// Codes are stable snake_case strings, always listed in the declaration order below, which is
/// the order of ``allCases`` and of ``codes``. An `expired` result carries every reason that
/// applies, not only the first one found (<doc:Rules#Eligibility-rule>).
public struct EligibilityReasons: OptionSet, Sendable, Hashable, CustomStringConvertible {
  public let rawValue: UInt16
  /// Creates a set from its bits; prefer the named members.
  @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// The wall clock reads earlier than the clock mark: a rollback (<doc:Rules#Clock-mark>).
  public static let clockBehindMark = EligibilityReasons(rawValue: 1 << 0)
  /// The newest item is dated after now (a negative age never passes: <doc:Rules#Eligibility-rule>).
  public static let itemFromFuture = EligibilityReasons(rawValue: 1 << 1)
  /// The oldest item is older than the max age (`now − oldest > maxAge`).
  public static let tooOld = EligibilityReasons(rawValue: 1 << 2)
  /// Items exist but no clock mark does (<doc:Rules#Fail-closed>; trust-on-first-use is off by default).
  public static let markMissing = EligibilityReasons(rawValue: 1 << 3)
  /// The stored clock mark cannot be read or is corrupt; its bytes are left alone.
  public static let markUnreadable = EligibilityReasons(rawValue: 1 << 4)
  /// The advanced mark could not be made durable, so `fresh` cannot be granted (<doc:Rules#Clock-mark>).
  public static let markNotPersisted = EligibilityReasons(rawValue: 1 << 5)
  /// A cached item (or the item index) cannot be read; nothing is deleted.
  public static let itemUnreadable = EligibilityReasons(rawValue: 1 << 6)
  /// The wall clock is behind the boot-clock floor by more than the tolerance (<doc:Rules#Boot-clock-floor>).
  public static let clockBehindElapsedTime = EligibilityReasons(rawValue: 1 << 7)
  /// The boot clock went backward within one boot: the floor's anchor is untrusted.
  public static let bootClockInconsistent = EligibilityReasons(rawValue: 1 << 8)
  /// A TPM is configured but cannot be read (missing, unreachable, no permission, or no answer
  /// within the TPM clock's time limit: the error is then `tpm_timed_out`).
  public static let tpmUnavailable = EligibilityReasons(rawValue: 1 << 9)
  /// The TPM is not the one the record was written with (cleared or replaced), or its clock went
  /// back further than a power loss explains; an online sign-in re-anchors.
  public static let tpmChanged = EligibilityReasons(rawValue: 1 << 10)
  /// The boot-clock floor is on but cannot be judged: no boot clock can be read now (no boot
  /// clock on this platform, or the boot id hidden from this process), or the last online
  /// sign-in had none to anchor the floor. Turn the floor off where there is no boot clock
  /// (``EligibilityPolicy/usesBootClockFloor``, `--no-boot-floor`).
  public static let bootClockUnavailable = EligibilityReasons(rawValue: 1 << 11)
  /// A sealed store's key cannot be had: the store error names the key's own code (a missing
  /// key file, one of the wrong size, with group or other access, of another owner, a symbolic
  /// link, inside the store, or a keyring that cannot be used now). Nothing of the store is
  /// trusted or changed; fix the key, or sign in online to create one (<doc:Rules#Sealed-stores>).
  public static let keyUnavailable = EligibilityReasons(rawValue: 1 << 12)
  /// The store is sealed but no sealing key was configured for it (open it with its key).
  public static let keyRequired = EligibilityReasons(rawValue: 1 << 13)
  /// The store is not sealed with the configured key: sealed with another key, or not sealed
  /// while a seal is expected. It is left alone until an online sign-in re-seals it.
  public static let sealMismatch = EligibilityReasons(rawValue: 1 << 14)

  /// Every reason, in the fixed listing order.
  public static let allCases: [(reason: EligibilityReasons, code: String)] = [
    (.clockBehindMark, "clock_behind_mark"),
    (.itemFromFuture, "item_from_future"),
    (.tooOld, "too_old"),
    (.markMissing, "mark_missing"),
    (.markUnreadable, "mark_unreadable"),
    (.markNotPersisted, "mark_not_persisted"),
    (.itemUnreadable, "item_unreadable"),
    (.clockBehindElapsedTime, "clock_behind_elapsed_time"),
    (.bootClockInconsistent, "boot_clock_inconsistent"),
    (.tpmUnavailable, "tpm_unavailable"),
    (.tpmChanged, "tpm_changed"),
    (.bootClockUnavailable, "boot_clock_unavailable"),
    (.keyUnavailable, "key_unavailable"),
    (.keyRequired, "key_required"),
    (.sealMismatch, "seal_mismatch"),
  ]

  /// The reason a store failure adds when it is a problem of the sealing key or seal, which
  /// both stores of a sealed pair report alike (`key_unavailable`, `key_required`,
  /// `seal_mismatch`; and `seal_mismatch` for `stores_sealed_differently`, a pair sealed
  /// differently), else `nil`.
  ///
  /// - Parameter code: The store error's code.
  /// - Returns: The reason, or `nil`.
  public static func sealing(_ code: StoreError.Code) -> EligibilityReasons? {
    switch code {
    case .keyUnavailable: .keyUnavailable
    case .keyRequired: .keyRequired
    case .sealMismatch, .storesSealedDifferently: .sealMismatch
    default: nil
    }
  }

  /// The snake_case codes of the reasons in this set, in the fixed listing order.
  ///
  /// - Complexity: O(k) for k known reasons; allocates the returned array (use only at the edges).
  public var codes: [String] {
    Self.allCases.compactMap { contains($0.reason) ? $0.code : nil }
  }

  /// The reason for a code, or `nil` for an unknown code.
  public init?(code: String) {
    guard let match = Self.allCases.first(where: { $0.code == code }) else { return nil }
    self = match.reason
  }

  /// The codes joined by commas, e.g. `clock_behind_mark,too_old`; empty for no reason.
  public var description: String { codes.joined(separator: ",") }
}
