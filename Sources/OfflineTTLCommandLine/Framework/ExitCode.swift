/// A process exit status, with the values `offline-ttl` uses (sysexits.h for the 64+ range).
public struct ExitCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
  /// The status passed to `exit(3)`.
  public let rawValue: Int32

  /// Creates an exit code from its number.
  ///
  /// - Parameter rawValue: The status passed to `exit(3)`.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// 0: success; for an eligibility answer, `fresh`.
  public static let success = ExitCode(rawValue: 0)
  /// 0: the cache may be used offline.
  public static let fresh = ExitCode(rawValue: 0)
  /// 1: refuse offline use (the data is kept).
  public static let expired = ExitCode(rawValue: 1)
  /// 2: nothing is cached.
  public static let unavailable = ExitCode(rawValue: 2)
  /// 3: the command committed its change (a sign-in, a mark written by `mark observe` or
  /// `mark reset`), but its confirmation could not be written to standard output; standard error
  /// says what was committed. Not a failure of the change: do not retry it.
  public static let committedOutputLost = ExitCode(rawValue: 3)
  /// 64 (`EX_USAGE`): the command line was wrong.
  public static let usage = ExitCode(rawValue: 64)
  /// 65 (`EX_DATAERR`): input data (for example a `--batch` line) was malformed.
  public static let dataError = ExitCode(rawValue: 65)
  /// 70 (`EX_SOFTWARE`): an unexpected internal error.
  public static let software = ExitCode(rawValue: 70)
  /// 74 (`EX_IOERR`): a file or store could not be read or written.
  public static let ioError = ExitCode(rawValue: 74)
  /// 75 (`EX_TEMPFAIL`): an online session was superseded by a newer sign-in; nothing was
  /// written and the store is fine: sign in again.
  public static let temporaryFailure = ExitCode(rawValue: 75)

  /// The number, e.g. `"64"`.
  public var description: String { String(rawValue) }
}
