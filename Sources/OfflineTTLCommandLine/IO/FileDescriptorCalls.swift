#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The only place the command-line module calls `read(2)` and `write(2)`; both retry on `EINTR`.
enum FileDescriptorCalls {
  /// Writes every byte, retrying short writes and `EINTR`.
  ///
  /// - Returns: `errno` of the first failure, or `nil` when everything was written.
  static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var offset = 0
    while offset < bytes.count {
      let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return errno
      }
      offset += written
    }
    return nil
  }

  /// Reads up to `buffer.count` bytes, retrying `EINTR`.
  ///
  /// - Returns: The number of bytes read (0 at end of file), or `-errno` on failure.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    while true {
      #if canImport(Glibc)
        let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      #else
        let count = Darwin.read(fd, buffer.baseAddress, buffer.count)
      #endif
      if count >= 0 { return count }
      if errno == EINTR { continue }
      return -Int(errno)
    }
  }
}
