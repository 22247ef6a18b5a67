/// A value given to OfflineTTL was outside what it accepts: a usage error, thrown at once.
///
/// Errors are a struct with an extensible ``Code`` rather than a public enum, so new codes can be
/// added without breaking clients (the shape of apple/swift-certificates' `CertificateError`).
public struct InvalidValueError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of value was rejected.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case outOfRange = "out_of_range"
      case negativeMaxAge = "negative_max_age"
      case invalidKey = "invalid_key"
      case invalidDuration = "invalid_duration"
      case invalidOption = "invalid_option"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// A number does not fit the type it must become (for example seconds that overflow `Int64`
    /// nanoseconds).
    public static let outOfRange = Code(.outOfRange)
    /// A max age below zero (<doc:Rules#Typed-time>).
    public static let negativeMaxAge = Code(.negativeMaxAge)
    /// An item key that breaks the key rules (1–255 bytes of UTF-8, no `/`, NUL or control
    /// characters, not `.` or `..`).
    public static let invalidKey = Code(.invalidKey)
    /// A duration string that cannot be read (for example a bare integer with no unit).
    public static let invalidDuration = Code(.invalidDuration)
    /// Any other option value that is not allowed.
    public static let invalidOption = Code(.invalidOption)

    /// The stable snake_case name, e.g. `negative_max_age`.
    public var description: String { backing.rawValue }
  }

  /// What kind of value was rejected.
  public let code: Code
  /// A sentence for people saying what was wrong and what is accepted.
  public let reason: String

  init(_ backing: Code.Backing, _ reason: String) {
    self.code = Code(backing)
    self.reason = reason
  }

  /// Creates an error with a code and a reason.
  public init(code: Code, reason: String) {
    self.code = code
    self.reason = reason
  }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
