/// The answer to "may this cache be used offline now?" (<doc:Rules#Eligibility-rule>).
public enum EligibilityStatus: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// Use the cache offline.
  case fresh
  /// Refuse offline use and ask for an online sign-in; the cached data is kept (<doc:Rules#Never-delete-on-expiry>).
  case expired
  /// Nothing is cached.
  case unavailable

  /// `fresh`, `expired` or `unavailable`.
  public var description: String { rawValue }
}
