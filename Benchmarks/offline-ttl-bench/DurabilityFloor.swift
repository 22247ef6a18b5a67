#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The durability floor shared by the benchmarks (`mark`, `gate`, `peer`): one in-place `pwrite`
/// of a record followed by `fdatasync`, the least a durable observation can cost.
/// Measure it in the same run and directory as the figure it is compared with.
///
/// ```swift
/// let floor = try DurabilityFloor(directory: dir, recordSize: 64)
/// defer { floor.close() }
/// let samples = try floor.measure(count: 500)   // nanoseconds, one per pwrite + fdatasync
/// ```
final class DurabilityFloor {
  private let fd: Int32
  private let path: String
  private var record: [UInt8]
  private var sequence: UInt64 = 0

  /// Creates (or truncates) `floor.bin` in `directory` holding one record of `recordSize` bytes,
  /// written and synced once.
  ///
  /// - Throws: ``BenchError`` when the file cannot be created or written.
  init(directory: String, recordSize: Int = 64) throws {
    path = directory + "/floor.bin"
    fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw BenchError.failed("cannot create \(path): errno \(errno)") }
    record = [UInt8](repeating: 0xA5, count: Swift.max(recordSize, 8))
    _ = try writeOnce()
  }

  /// One timed `pwrite` at offset 0 + `fdatasync`, in nanoseconds.
  func writeOnce() throws -> UInt64 {
    sequence &+= 1
    withUnsafeBytes(of: sequence.littleEndian) { bytes in
      for index in 0..<8 { record[index] = bytes[index] }
    }
    let start = BenchClock.now()
    let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    guard written == record.count else {
      throw BenchError.failed("pwrite \(path): errno \(errno)")
    }
    guard fdatasync(fd) == 0 else { throw BenchError.failed("fdatasync \(path): errno \(errno)") }
    return BenchClock.now() &- start
  }

  /// `count` timed `pwrite` + `fdatasync` cycles, in nanoseconds each.
  func measure(count: Int) throws -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for _ in 0..<count { samples.append(try writeOnce()) }
    return samples
  }

  /// Closes and removes the file.
  func close() {
    closeDescriptor(fd)
    unlink(path)
  }
}

/// `close(2)` under a name a method called `close` does not shadow.
private func closeDescriptor(_ fd: Int32) {
  _ = close(fd)
}
