#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A Unix-domain socket bound at a path: a file of a type that cannot be opened at all (`open`
/// fails with `ENXIO`), which tests put where the library expects a regular file or a directory.
public enum UnixSocket {
  /// Why a socket could not be bound.
  public struct Failure: Error, CustomStringConvertible {
    /// What failed, with its `errno`.
    public let description: String
  }

  /// Binds a new Unix-domain stream socket at `path`. The socket file stays after the
  /// descriptor is closed (until it is unlinked); a test that needs a listening peer keeps the
  /// descriptor open.
  ///
  /// - Parameter path: Where the socket file is made; shorter than `sun_path` (108 bytes on
  ///   Linux, 104 on Apple platforms).
  /// - Returns: The socket's descriptor, close-on-exec; the caller closes it.
  /// - Throws: ``Failure`` when the path is too long, or `socket` or `bind` fails.
  public static func bind(at path: String) throws(Failure) -> Int32 {
    var address = sockaddr_un()
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw Failure(description: "socket path \(path) is \(bytes.count) bytes, too long")
    }
    #if canImport(Glibc)
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
      let fd = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        systemBind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0 else {
      let error = errno
      close(fd)
      throw Failure(description: "bind \(path): errno \(error)")
    }
    return fd
  }

  /// Binds a socket at `path` (``bind(at:)``) and closes it: the socket file stays.
  ///
  /// - Parameter path: Where the socket file is made.
  /// - Throws: ``Failure`` as ``bind(at:)``.
  public static func place(at path: String) throws(Failure) {
    close(try bind(at: path))
  }
}

/// The C library's `bind(2)` (inside ``UnixSocket`` the name is its own method's).
private func systemBind(
  _ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t
) -> Int32 {
  bind(fd, address, length)
}
