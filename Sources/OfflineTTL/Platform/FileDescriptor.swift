/// An open file descriptor, typed so it cannot be mixed with other integers.
///
/// A plain value: copying it does not duplicate the descriptor, and it is closed only by
/// `Syscalls.close(_:)`. Every descriptor the seam opens has `O_CLOEXEC` set.
@_spi(SystemCalls)
public struct FileDescriptor: Sendable, Hashable, CustomStringConvertible {
  /// The raw C descriptor.
  public let rawValue: Int32

  /// Wraps a raw descriptor.
  ///
  /// - Parameter rawValue: A descriptor returned by `open`, `openat`, ….
  public init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// `"fd 3"`.
  public var description: String { "fd \(rawValue)" }
}
