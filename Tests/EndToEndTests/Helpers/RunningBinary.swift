import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child started by ``BinaryRunner`` that has not been waited for yet.
struct RunningBinary {
  /// How a child ended.
  struct Exit {
    /// The exit status, or `nil` when the child was killed (by a signal or the timeout).
    var exitCode: Int32?
    /// Whether ``RunningBinary/waitForExit(timeout:)`` killed it because it outlived its timeout.
    var timedOut: Bool
    /// The wall time from the start to the end of the wait.
    var elapsed: Duration
  }

  /// The child process.
  let process: Process
  /// The read end of the child's standard output, when it was started with a pipe.
  let standardOutput: FileHandle?
  /// When the child was started (``ContinuousClock``).
  let started: ContinuousClock.Instant

  /// The child's process id.
  var pid: pid_t { process.processIdentifier }

  /// Sends `SIGKILL` to the child by its pid (a no-op once it has been reaped).
  func kill() {
    #if canImport(Glibc)
      _ = Glibc.kill(pid, SIGKILL)
    #elseif canImport(Darwin)
      _ = Darwin.kill(pid, SIGKILL)
    #endif
  }

  /// Waits for the child to end, killing it by pid (`SIGKILL`) when it is still running
  /// `timeout` after its start.
  ///
  /// - Parameter timeout: How long after the start to wait before killing it.
  /// - Returns: How it ended.
  func waitForExit(timeout: Duration = BinaryRunner.hangBound) -> Exit {
    var timedOut = false
    while process.isRunning {
      if ContinuousClock.now - started > timeout {
        timedOut = true
        kill()
        break
      }
      usleep(2_000)
    }
    process.waitUntilExit()
    let elapsed = ContinuousClock.now - started
    let exited = process.terminationReason == .exit && !timedOut
    return Exit(
      exitCode: exited ? process.terminationStatus : nil, timedOut: timedOut, elapsed: elapsed)
  }
}
