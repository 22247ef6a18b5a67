extension Syscalls {
  /// `pread` until `buffer` is full or end of file.
  ///
  /// - Parameters:
  ///   - fd: The descriptor.
  ///   - buffer: Where to read to.
  ///   - offset: The file offset of the first byte, in bytes.
  /// - Returns: Bytes read; less than `buffer.count` only at end of file.
  /// - Throws: ``Errno``.
  /// - Complexity: O(`buffer.count`).
  public func preadAll(
    _ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
  ) throws(Errno) -> Int {
    var done = 0
    while done < buffer.count {
      let count = try pread(
        fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]),
        at: offset + Int64(done))
      if count == 0 { break }
      done += count
    }
    return done
  }

  /// `pwrite` until all of `buffer` is written.
  ///
  /// - Parameters:
  ///   - fd: The descriptor.
  ///   - buffer: The bytes.
  ///   - offset: The file offset of the first byte, in bytes.
  /// - Throws: ``Errno``; some bytes may have been written.
  /// - Complexity: O(`buffer.count`).
  public func pwriteAll(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, at offset: Int64)
    throws(Errno)
  {
    var done = 0
    try pwriteAll(fd, buffer, at: offset, written: &done)
  }

  /// `pwrite` until all of `buffer` is written, counting the bytes written in `written`, so that
  /// a caller can tell a write that failed before changing anything (`written` still 0: a
  /// `pwrite` that returns an error wrote nothing) from one that changed a prefix (a short
  /// write, then an error). A fault plan's ``SyscallFaultPlan/shorten(_:occurrence:to:)`` makes
  /// one of these `pwrite`s short.
  ///
  /// - Parameters:
  ///   - fd: The descriptor.
  ///   - buffer: The bytes.
  ///   - offset: The file offset of the first byte, in bytes.
  ///   - written: Set to the bytes written from the start of `buffer`, also when this throws.
  /// - Throws: ``Errno``; the first `written` bytes were written.
  /// - Complexity: O(`buffer.count`).
  public func pwriteAll(
    _ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, at offset: Int64,
    written: inout Int
  ) throws(Errno) {
    written = 0
    while written < buffer.count {
      var end = buffer.count
      if let short = faults?.shortWriteLength(ofNext: .pwrite) {
        end = Swift.min(end, written + short)
      }
      let count = try pwrite(
        fd, UnsafeRawBufferPointer(rebasing: buffer[written..<end]), at: offset + Int64(written))
      if count == 0 { throw Errno.ioError }
      written += count
    }
  }

  /// `write` until all of `buffer` is written.
  ///
  /// - Throws: ``Errno``; some bytes may have been written.
  /// - Complexity: O(`buffer.count`).
  public func writeAll(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer) throws(Errno) {
    var done = 0
    while done < buffer.count {
      let count = try write(fd, UnsafeRawBufferPointer(rebasing: buffer[done...]))
      if count == 0 { throw Errno.ioError }
      done += count
    }
  }

  /// Closes `fd`, ignoring any error: for descriptors opened only to read or to hold a lock,
  /// and for cleanup on a path that already failed.
  ///
  /// - Parameter fd: The descriptor to close.
  public func closeIgnoringErrors(_ fd: FileDescriptor) {
    do { try close(fd) } catch {}
  }
}

extension Syscalls {
  /// ``pwriteAll(_:_:at:)`` for an array slice.
  ///
  /// - Throws: ``Errno``; some bytes may have been written.
  public func pwriteAll(_ fd: FileDescriptor, bytes: ArraySlice<UInt8>, at offset: Int64)
    throws(Errno)
  {
    var done = 0
    try pwriteAll(fd, bytes: bytes, at: offset, written: &done)
  }

  /// ``pwriteAll(_:_:at:written:)`` for an array slice.
  ///
  /// - Throws: ``Errno``; the first `written` bytes were written.
  public func pwriteAll(
    _ fd: FileDescriptor, bytes: ArraySlice<UInt8>, at offset: Int64, written: inout Int
  ) throws(Errno) {
    var failure: Errno? = nil
    var done = 0
    bytes.withUnsafeBytes { buffer in
      do throws(Errno) { try pwriteAll(fd, buffer, at: offset, written: &done) } catch {
        failure = error
      }
    }
    written = done
    if let failure { throw failure }
  }

  /// ``writeAll(_:_:)`` for an array slice.
  ///
  /// - Throws: ``Errno``; some bytes may have been written.
  public func writeAll(_ fd: FileDescriptor, bytes: ArraySlice<UInt8>) throws(Errno) {
    var failure: Errno? = nil
    bytes.withUnsafeBytes { buffer in
      do throws(Errno) { try writeAll(fd, buffer) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// ``preadAll(_:into:at:)`` into an array, filling it from its start.
  ///
  /// - Returns: Bytes read; less than `bytes.count` only at end of file.
  /// - Throws: ``Errno``.
  public func preadAll(_ fd: FileDescriptor, into bytes: inout [UInt8], at offset: Int64)
    throws(Errno) -> Int
  {
    var result: Result<Int, Errno> = .success(0)
    bytes.withUnsafeMutableBytes { buffer in
      do throws(Errno) { result = .success(try preadAll(fd, into: buffer, at: offset)) } catch {
        result = .failure(error)
      }
    }
    return try result.get()
  }
}
