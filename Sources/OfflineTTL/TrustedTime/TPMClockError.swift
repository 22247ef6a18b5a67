/// A configured TPM could not vouch for the time: a refusal, never a silent fallback.
///
/// A struct with an extensible ``Code`` (new codes do not break clients).
public struct TPMClockError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Why the TPM could not be used.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case tpmUnavailable = "tpm_unavailable"
      case tpmChanged = "tpm_changed"
      case tpmTimedOut = "tpm_timed_out"
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The TPM is missing, unreachable (no device, no permission on `/dev/tpmrm0`, no `swtpm`
    /// listening), or answered with an error.
    public static let tpmUnavailable = Code(.tpmUnavailable)
    /// The TPM is not the one the record was written with: another identity (cleared or
    /// replaced), or counters and clock that went backward in a way no power loss explains.
    /// An online sign-in re-anchors on the TPM now present.
    public static let tpmChanged = Code(.tpmChanged)
    /// The TPM did not answer within the clock's time limit (another client holds it, an
    /// endpoint accepts connections and never answers, the TPM hangs). Reported as a TPM that
    /// cannot be read: the decision's reasons carry `tpm_unavailable`.
    public static let tpmTimedOut = Code(.tpmTimedOut)

    /// The stable snake_case name.
    public var description: String { backing.rawValue }
  }

  /// Why the TPM could not be used.
  public let code: Code
  /// The TSS2 response code when the TPM Software Stack returned one, else `nil`.
  public let responseCode: UInt32?
  /// A sentence for people.
  public let reason: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind.
  ///   - responseCode: The TSS2 response code, if any.
  ///   - reason: A sentence for people.
  public init(code: Code, responseCode: UInt32? = nil, reason: String) {
    self.code = code
    self.responseCode = responseCode
    self.reason = reason
  }

  /// `"<code>: <reason>"`.
  public var description: String { "\(code): \(reason)" }
}
