import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TPM endpoint that takes connections and never answers, for tests of a TPM that hangs: two
/// listening TCP sockets on 127.0.0.1, a command port `P` and a control port `P + 1` (the pair
/// swtpm and the Microsoft simulator use). The kernel completes each connection (up to the
/// listen backlog) while nothing ever accepts, reads or writes, so a TPM client connects, sends
/// its command and then waits for an answer that never comes.
///
/// ```swift
/// let endpoint = try SilentTPMEndpoint()
/// defer { endpoint.close() }
/// let clock = try ESYSTPMClock(tcti: endpoint.tcti, timeout: .seconds(1))  // OfflineTTLTPM
/// ```
///
/// ``close()`` (or releasing the endpoint) closes both sockets, which resets the connections
/// they hold: a client still waiting then fails.
public final class SilentTPMEndpoint: @unchecked Sendable {
  // @unchecked: the descriptors are set once in init; close() is called by one test.

  /// The command port; the control port is the next one.
  public let port: Int
  private var descriptors: [Int32]

  /// A TCTI configuration for this endpoint, `swtpm:host=127.0.0.1,port=P` by default.
  ///
  /// - Parameter kind: The TCTI: `swtpm` or `mssim`.
  public func tcti(_ kind: String = "swtpm") -> String { "\(kind):host=127.0.0.1,port=\(port)" }

  /// The TCTI configuration `swtpm:host=127.0.0.1,port=P`.
  public var tcti: String { tcti() }

  /// Listens on a free port pair (up to 50 random pairs in 20000...59999).
  ///
  /// - Throws: ``SwtpmError`` when no pair can be bound.
  public init() throws {
    for _ in 0..<50 {
      let candidate = Int.random(in: 10_000...29_999) * 2
      guard let command = Self.listening(on: candidate) else { continue }
      guard let control = Self.listening(on: candidate + 1) else {
        closeSocket(command)
        continue
      }
      port = candidate
      descriptors = [command, control]
      return
    }
    throw SwtpmError("no free port pair to listen on")
  }

  deinit { close() }

  /// Closes both sockets (resetting the connections waiting on them).
  public func close() {
    for descriptor in descriptors { closeSocket(descriptor) }
    descriptors = []
  }

  /// A port pair on 127.0.0.1 where nothing listens now (both ports bind), for a TPM that is
  /// not there: a client's connection is refused.
  ///
  /// - Returns: The command port; the control port is the next one.
  /// - Throws: ``SwtpmError`` when no pair is free.
  public static func unusedPort() throws -> Int {
    for _ in 0..<50 {
      let candidate = Int.random(in: 10_000...29_999) * 2
      if SwtpmProcess.isFree(candidate), SwtpmProcess.isFree(candidate + 1) { return candidate }
    }
    throw SwtpmError("no free port pair")
  }

  private static func listening(on port: Int) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    var address = SwtpmProcess.loopback(port)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
    guard bound, listen(descriptor, 16) == 0 else {
      closeSocket(descriptor)
      return nil
    }
    return descriptor
  }
}

/// A TCP client connection to 127.0.0.1 that sends nothing: another client holding a TPM
/// that serves one connection at a time (swtpm). Closed by ``close()`` or when released.
public final class HeldTCPConnection: @unchecked Sendable {
  // @unchecked: the descriptor is set once in init; close() is called by one test.
  private var descriptor: Int32

  /// Connects to 127.0.0.1:`port`.
  ///
  /// - Parameter port: The port.
  /// - Throws: ``SwtpmError`` when the connection fails.
  public init(port: Int) throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw SwtpmError("socket failed (errno \(errno))") }
    var address = SwtpmProcess.loopback(port)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
    guard connected else {
      let error = errno
      closeSocket(descriptor)
      throw SwtpmError("connect to port \(port) failed (errno \(error))")
    }
    self.descriptor = descriptor
  }

  deinit { close() }

  /// Closes the connection.
  public func close() {
    if descriptor >= 0 { closeSocket(descriptor) }
    descriptor = -1
  }
}

/// `close(2)` for the types above, whose own `close()` hides the C function.
private func closeSocket(_ descriptor: Int32) {
  _ = close(descriptor)
}
