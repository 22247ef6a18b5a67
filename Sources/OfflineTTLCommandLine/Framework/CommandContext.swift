import OfflineTTL

#if TPM
  import OfflineTTLTPM
#endif

/// What a subcommand may touch besides its arguments: standard streams, the wall clock and the
/// environment. Tests build one over memory and a manual clock.
struct CommandContext {
  /// Standard output.
  var standardOutput: OutputSink
  /// Standard error.
  var standardError: OutputSink
  /// Standard input.
  var standardInput: InputSource
  /// The wall clock, read at decision time.
  var clock: any WallClock
  /// Environment variables.
  var environment: [String: String]
  /// The boot clock that carries the floor forward (the Rules article, "Boot-clock floor"); `nil` for none. Tests
  /// inject a manual one; the process uses ``LinuxBootClock``.
  var bootClock: (any BootClock)? = LinuxBootClock()
  /// Opens the TPM clock a `--tpm <tcti>` value names, with the `--tpm-timeout` limit of each
  /// call (nothing is read from the TPM yet): the TPM Software Stack's clock in a build with
  /// the `TPM` trait. Tests inject a manual one.
  ///
  /// Throws ``UsageError`` (exit 64) for a value that is not a TCTI configuration.
  var openTPM: (String, Duration) throws(UsageError) -> any TPMClock = CommandContext.systemTPM

  /// The real process: file descriptors 0, 1, 2, the system clock and the process environment.
  static func process(environment: [String: String]) -> CommandContext {
    CommandContext(
      standardOutput: OutputSink(fileDescriptor: 1),
      standardError: OutputSink(fileDescriptor: 2),
      standardInput: InputSource(fileDescriptor: 0),
      clock: SystemWallClock(),
      environment: environment)
  }

  /// The TPM clock of a `--tpm` value: ``ESYSTPMClock`` over the TCTI it names, each call
  /// bounded by `timeout`.
  ///
  /// - Throws: ``UsageError`` for a value that is not a TCTI configuration or a time limit out
  ///   of range; always, in a build without the `TPM` trait (which does not declare `--tpm`).
  static func systemTPM(_ tcti: String, timeout: Duration) throws(UsageError) -> any TPMClock {
    #if TPM
      do {
        return try ESYSTPMClock(tcti: tcti, timeout: timeout)
      } catch {
        throw UsageError(
          "\(error.code == .invalidDuration ? "--tpm-timeout" : "--tpm"): \(error.reason)")
      }
    #else
      throw UsageError("--tpm: this build has no TPM clock (build with the TPM trait)")
    #endif
  }
}
