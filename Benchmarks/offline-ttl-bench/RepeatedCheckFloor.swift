import Foundation
@_spi(SystemCalls) import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The floors of a repeated check (one that writes nothing), measured on the store the check
/// reads, through descriptors opened once:
/// - **reads**: one `pread` of the mark record (8 KiB) and one of the index header (72 bytes):
///   the least any design must read, two small records the page cache holds;
/// - **mark checks**: the system calls the store's read without the lock makes per call:
///   `lstat` of the store directory, `fstatat` of the record and of the lock file,
///   `flock(LOCK_SH | LOCK_NB)`, the `pread`, `flock(LOCK_UN)`;
/// - **summary checks**: the system calls the item summary makes per call through its kept
///   descriptors: `lstat` of the store directory, `fstatat` of `cache`, of `pending` (absent),
///   of `index` and of `items`, and the `pread` of the index header;
/// - **all checks**: both, and the two clock readings a decision takes (`CLOCK_REALTIME`,
///   `CLOCK_BOOTTIME`): the least a repeated check costs while every call re-checks the
///   identity, owner and mode of what it reads (the second floor);
/// - **watched calls**: the system calls a repeated check makes when the stores' shared change
///   watch reports nothing and its path watch is on: one `poll` of an inotify descriptor with
///   nothing queued and of the mount table (zero timeout) and one `geteuid`, for both stores;
///   and the two clock readings. (No lock: the mark store reuses its last validated read while
///   the watch is quiet; no `lstat` of the store path: the path watch proves it.)
final class RepeatedCheckFloor {
  private let directory: String
  private let store: Int32
  private let cache: Int32
  private let record: Int32
  private let lock: Int32
  private let index: Int32
  private let watch: Int32
  private let mounts: Int32
  private var recordBuffer = [UInt8](repeating: 0, count: 8192)
  private var indexBuffer = [UInt8](repeating: 0, count: 72)

  init(directory: String) throws {
    self.directory = directory
    store = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    cache = open(directory + "/cache", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    record = open(directory + "/clock-mark", O_RDONLY | O_CLOEXEC)
    lock = open(directory + "/clock-mark.lock", O_RDONLY | O_CLOEXEC)
    index = open(directory + "/cache/index", O_RDONLY | O_CLOEXEC)
    watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    mounts = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
    guard store >= 0, cache >= 0, record >= 0, lock >= 0, index >= 0, watch >= 0, mounts >= 0,
      inotify_add_watch(watch, directory, UInt32(IN_MODIFY)) >= 0
    else {
      throw BenchError.failed("cannot open the store's files in \(directory): errno \(errno)")
    }
  }

  deinit {
    for fd in [store, cache, record, lock, index, watch, mounts] where fd >= 0 { Glibc.close(fd) }
  }

  /// `count` samples of the watched calls, nanoseconds each.
  func watchedChecks(_ count: Int) -> [UInt64] {
    var time = timespec()
    return indexBuffer.withUnsafeMutableBytes { buffer in
      (0..<count).map { _ in
        BenchClock.time {
          var sum = 0
          var entries = (
            pollfd(fd: watch, events: Int16(POLLIN), revents: 0),
            pollfd(fd: mounts, events: Int16(POLLPRI), revents: 0)
          )
          sum += withUnsafeMutableBytes(of: &entries) { raw in
            Int(poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, 0))
          }
          sum += Int(geteuid())
          sum += buffer.count
          sum += Int(clock_gettime(CLOCK_REALTIME, &time))
          sum += Int(clock_gettime(CLOCK_BOOTTIME, &time))
          blackHole(sum)
        }
      }
    }
  }

  /// `count` samples of the two reads, nanoseconds each.
  func reads(_ count: Int) -> [UInt64] {
    (0..<count).map { _ in
      BenchClock.time {
        let a = recordBuffer.withUnsafeMutableBytes { pread(record, $0.baseAddress, 8192, 0) }
        let b = indexBuffer.withUnsafeMutableBytes { pread(index, $0.baseAddress, 72, 0) }
        blackHole(a + b)
      }
    }
  }

  /// `count` samples of the mark read's system calls, nanoseconds each.
  func markChecks(_ count: Int) -> [UInt64] {
    (0..<count).map { _ in BenchClock.time { blackHole(markCalls()) } }
  }

  /// `count` samples of the item summary's system calls, nanoseconds each.
  func summaryChecks(_ count: Int) -> [UInt64] {
    (0..<count).map { _ in BenchClock.time { blackHole(summaryCalls()) } }
  }

  /// `count` samples of both, with the two clock readings, nanoseconds each.
  func allChecks(_ count: Int) -> [UInt64] {
    var time = timespec()
    return (0..<count).map { _ in
      BenchClock.time {
        var sum = summaryCalls()
        sum += markCalls()
        sum += Int(clock_gettime(CLOCK_REALTIME, &time))
        sum += Int(clock_gettime(CLOCK_BOOTTIME, &time))
        blackHole(sum)
      }
    }
  }

  private func markCalls() -> Int {
    var status = stat()
    var sum = lstat(directory, &status)
    sum += fstatat(store, "clock-mark", &status, AT_SYMLINK_NOFOLLOW)
    sum += fstatat(store, "clock-mark.lock", &status, AT_SYMLINK_NOFOLLOW)
    sum += flock(lock, LOCK_SH | LOCK_NB)
    let read = recordBuffer.withUnsafeMutableBytes { pread(record, $0.baseAddress, 8192, 0) }
    sum += flock(lock, LOCK_UN)
    return Int(sum) + read
  }

  private func summaryCalls() -> Int {
    var status = stat()
    var sum = lstat(directory, &status)
    sum += fstatat(store, "cache", &status, AT_SYMLINK_NOFOLLOW)
    sum += fstatat(cache, "pending", &status, AT_SYMLINK_NOFOLLOW)
    sum += fstatat(cache, "index", &status, AT_SYMLINK_NOFOLLOW)
    let read = indexBuffer.withUnsafeMutableBytes { pread(index, $0.baseAddress, 72, 0) }
    sum += fstatat(cache, "items", &status, AT_SYMLINK_NOFOLLOW)
    return Int(sum) + read
  }
}
