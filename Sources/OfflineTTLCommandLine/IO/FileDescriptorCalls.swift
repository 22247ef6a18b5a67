@_spi(SystemCalls) import OfflineTTL

/// The command line's `read(2)` and `write(2)` on standard input and output, through the syscall
/// seam (both retry on `EINTR`).
enum FileDescriptorCalls {
  /// Writes every byte, retrying short writes and `EINTR`.
  ///
  /// - Returns: `errno` of the first failure, or `nil` when everything was written.
  static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    do {
      try Syscalls().writeAll(FileDescriptor(rawValue: fd), bytes)
      return nil
    } catch {
      return error.rawValue
    }
  }

  /// Reads up to `buffer.count` bytes, retrying `EINTR`.
  ///
  /// - Returns: The number of bytes read (0 at end of file), or `-errno` on failure.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    do {
      return try Syscalls().read(FileDescriptor(rawValue: fd), into: buffer)
    } catch {
      return -Int(error.rawValue)
    }
  }
}
