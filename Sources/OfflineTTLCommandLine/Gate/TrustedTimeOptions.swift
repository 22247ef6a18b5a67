import OfflineTTL

#if TPM
  import OfflineTTLTPM
#endif

/// `--tpm <tcti>` and `--tpm-timeout <duration>` (the store subcommands and `demo`, in a build
/// with the `TPM` trait) and `--server-time`, `--server-time-uncertainty` (`sign-in`): the
/// options of trusted time.
enum TrustedTimeOptions {
  /// The `--tpm` and `--tpm-timeout` options, listed only when the TPM clock is built in.
  static var tpmOptionSpecs: [OptionSpec] {
    #if TPM
      [.tpm, .tpmTimeout]
    #else
      []
    #endif
  }

  /// ``tpmOptionSpecs`` with a subcommand's own help for `--tpm`.
  ///
  /// - Parameter help: The help sentence of `--tpm`.
  /// - Returns: The options.
  static func tpmOptionSpecs(tpmHelp help: String) -> [OptionSpec] {
    tpmOptionSpecs.map { $0.name == OptionSpec.tpm.name ? $0.with(help: help) : $0 }
  }

  #if TPM
    /// The time limit of each TPM call when `--tpm-timeout` is not given: the library's
    /// default, `ESYSTPMClock.defaultTimeout` (declared there only).
    static let defaultTPMTimeout: Duration = ESYSTPMClock.defaultTimeout
  #else
    /// No TPM clock in this build (`--tpm-timeout` is not declared): nothing to wait for.
    static let defaultTPMTimeout: Duration = .zero
  #endif

  /// A `--tpm-timeout` value, checked.
  ///
  /// - Parameter duration: The parsed duration.
  /// - Returns: It, when it is more than zero and at most an hour.
  /// - Throws: ``UsageError`` (exit 64) otherwise.
  static func tpmTimeout(_ duration: Duration) throws(UsageError) -> Duration {
    guard duration > .zero, duration <= .seconds(3600) else {
      throw UsageError(
        "--tpm-timeout: must be more than 0s and at most 1h, got "
          + StoreCommandSupport.durationText(duration))
    }
    return duration
  }

  /// `--server-time` and `--server-time-uncertainty`, in the order `--help` lists them.
  static let serverTimeOptionSpecs: [OptionSpec] = [.serverTime, .serverTimeUncertainty]

  /// The TPM clock `--tpm` names, or `nil` when it was not given.
  ///
  /// - Parameters:
  ///   - arguments: The parsed arguments.
  ///   - context: Opens the clock (``CommandContext/openTPM``); nothing is read from the TPM
  ///     here.
  /// - Throws: ``UsageError`` (exit 64) for a value that is not a TCTI configuration, a
  ///   `--tpm-timeout` out of range, or a `--tpm-timeout` without `--tpm`.
  static func tpmClock(_ arguments: ParsedArguments, context: CommandContext) throws(UsageError)
    -> (any TPMClock)?
  {
    #if TPM
      let timeout = try arguments.duration(.tpmTimeout).map { (value) throws(UsageError) in
        try tpmTimeout(value)
      }
      guard let tcti = arguments.value(.tpm) else {
        if timeout != nil { throw UsageError("--tpm-timeout needs --tpm") }
        return nil
      }
      return try context.openTPM(tcti, timeout ?? defaultTPMTimeout)
    #else
      // This build does not declare --tpm, so the reader rejected it already.
      return nil
    #endif
  }

  /// The server anchor of `sign-in`: `--server-time` and `--server-time-uncertainty`, or `nil`
  /// when neither was given.
  ///
  /// - Parameter arguments: The parsed arguments.
  /// - Returns: The server time and its uncertainty (`0s` when not given).
  /// - Throws: ``UsageError`` (exit 64): a time that is neither RFC 3339 nor an integer count of
  ///   seconds since the epoch (or does not fit in `Int64` nanoseconds), an uncertainty that is
  ///   not a duration with units or is negative, or an uncertainty without a server time.
  static func serverAnchor(_ arguments: ParsedArguments) throws(UsageError) -> (
    serverTime: WallClockInstant, uncertainty: Duration
  )? {
    let uncertainty = try arguments.duration(.serverTimeUncertainty)
    guard let text = arguments.value(.serverTime) else {
      if uncertainty != nil {
        throw UsageError("--server-time-uncertainty needs --server-time")
      }
      return nil
    }
    if let uncertainty, uncertainty < .zero {
      throw UsageError(
        "--server-time-uncertainty: must be zero or more, got "
          + StoreCommandSupport.durationText(uncertainty))
    }
    return (try serverTime(text), uncertainty ?? .zero)
  }

  /// A `--server-time` value: RFC 3339 (`2026-11-30T15:00:00Z`, `...T16:00:00.250+01:00`) or an
  /// integer count of seconds since the Unix epoch (`1795964400`, `-5`).
  ///
  /// - Parameter text: The value.
  /// - Returns: The instant.
  /// - Throws: ``UsageError`` naming both accepted shapes.
  /// - Complexity: O(n) in the length of `text`.
  static func serverTime(_ text: String) throws(UsageError) -> WallClockInstant {
    let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
    if !digits.isEmpty,
      digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    {
      let seconds = try IntegerParser.int64(text, option: OptionSpec.serverTime.name)
      return try TimeUnit.seconds.instant(seconds, option: OptionSpec.serverTime.name)
    }
    do {
      return try WallClockInstant(rfc3339: text)
    } catch {
      throw UsageError(
        "--server-time: expected an RFC 3339 time (2026-11-30T15:00:00Z) or an integer count of"
          + " seconds since the epoch, got \(text.debugDescription): \(error.reason)")
    }
  }
}
