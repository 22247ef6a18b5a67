import OfflineTTL

extension ExitCode {
  /// The exit status of an eligibility answer: 0 fresh, 1 expired, 2 unavailable.
  ///
  /// Used by every command that answers with a decision (`evaluate`, `status`, `read`).
  ///
  /// - Parameter status: The decision's status.
  init(_ status: EligibilityStatus) {
    switch status {
    case .fresh: self = .fresh
    case .expired: self = .expired
    case .unavailable: self = .unavailable
    }
  }
}
