import OfflineTTL

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

  /// The real process: file descriptors 0, 1, 2, the system clock and the process environment.
  static func process(environment: [String: String]) -> CommandContext {
    CommandContext(
      standardOutput: OutputSink(fileDescriptor: 1),
      standardError: OutputSink(fileDescriptor: 2),
      standardInput: InputSource(fileDescriptor: 0),
      clock: SystemWallClock(),
      environment: environment)
  }
}
