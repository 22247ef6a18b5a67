import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call: its name and `errno`.
struct SystemCallError: Error {
  let call: StaticString
  let errno: Int32

  var message: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The libc calls the directory cache store makes, each retried on `EINTR` (never `close`), each
/// with a typed failure. Every descriptor is opened `O_CLOEXEC`, and every path component the
/// store creates or opens is opened `O_NOFOLLOW`, so a symbolic link is never followed.
enum CacheFiles {
  static func retrying<T: BinaryInteger>(_ call: StaticString, _ body: () -> T) throws(SystemCallError)
    -> T
  {
    while true {
      let result = body()
      if result >= 0 { return result }
      let code = errno
      if code == EINTR { continue }
      throw SystemCallError(call: call, errno: code)
    }
  }

  /// Opens a directory relative to `parent` (or an absolute/relative path when `parent` is
  /// `AT_FDCWD`), without following a symbolic link in its last component.
  static func openDirectory(_ parent: Int32, _ name: String) throws(SystemCallError) -> Int32 {
    try retrying("openat") {
      openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }
  }

  /// Opens `name` in `parent`, creating the directory (mode 0700) first when it is missing.
  static func openOrCreateDirectory(_ parent: Int32, _ name: String) throws(SystemCallError)
    -> Int32
  {
    do {
      return try openDirectory(parent, name)
    } catch where error.errno == ENOENT {
      do {
        _ = try retrying("mkdirat") { mkdirat(parent, name, 0o700) }
      } catch where error.errno == EEXIST {}
      let fd = try openDirectory(parent, name)
      _ = fchmod(fd, 0o700)
      return fd
    }
  }

  static func openFile(_ parent: Int32, _ name: String, _ flags: Int32) throws(SystemCallError)
    -> Int32
  {
    try retrying("openat") { openat(parent, name, flags | O_NOFOLLOW | O_CLOEXEC, 0o600) }
  }

  /// Creates (or truncates) a private file for writing.
  static func createFile(_ parent: Int32, _ name: String) throws(SystemCallError) -> Int32 {
    let fd = try openFile(parent, name, O_WRONLY | O_CREAT | O_TRUNC)
    _ = fchmod(fd, 0o600)
    return fd
  }

  static func close(_ fd: Int32) {
    _ = Glibc.close(fd)
  }

  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(SystemCallError) in try writeAll(fd, raw) } }
    try result.get()
  }

  static func writeAll(_ fd: Int32, _ bytes: Data) throws(SystemCallError) {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(SystemCallError) in try writeAll(fd, raw) } }
    try result.get()
  }

  static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
    var offset = 0
    while offset < bytes.count {
      let base = bytes.baseAddress! + offset
      let remaining = bytes.count - offset
      let written = try retrying("write") { Glibc.write(fd, base, remaining) }
      offset += written
    }
  }

  /// Reads up to `count` bytes from `offset`; fewer only at end of file.
  static func read(_ fd: Int32, count: Int, offset: Int64) throws(SystemCallError) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: count)
    let result = buffer.withUnsafeMutableBytes { raw in
      Result { () throws(SystemCallError) -> Int in
        var filled = 0
        while filled < count {
          let base = raw.baseAddress! + filled
          let want = count - filled
          let at = off_t(offset) + off_t(filled)
          let got = try retrying("pread") { pread(fd, base, want, at) }
          if got == 0 { break }
          filled += got
        }
        return filled
      }
    }
    let filled = try result.get()
    buffer.removeLast(count - filled)
    return buffer
  }

  static func status(_ fd: Int32) throws(SystemCallError) -> stat {
    var info = stat()
    _ = try retrying("fstat") { fstat(fd, &info) }
    return info
  }

  static func status(_ parent: Int32, _ name: String) throws(SystemCallError) -> stat {
    var info = stat()
    _ = try retrying("fstatat") { fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) }
    return info
  }

  static func exists(_ parent: Int32, _ name: String) throws(SystemCallError) -> Bool {
    do {
      _ = try status(parent, name)
      return true
    } catch where error.errno == ENOENT {
      return false
    }
  }

  static func sync(_ fd: Int32) throws(SystemCallError) {
    _ = try retrying("fsync") { fsync(fd) }
  }

  /// Flushes the whole file system holding `fd` (`syncfs(2)` on Linux): one call that makes every
  /// file written before it durable, instead of one `fsync` per file.
  static func syncFileSystem(_ fd: Int32) throws(SystemCallError) {
    #if os(Linux)
      _ = try retrying("syncfs") { linuxSyncfs(fd) }
    #else
      _ = try retrying("fsync") { fsync(fd) }
    #endif
  }

  static func rename(_ fromParent: Int32, _ from: String, _ toParent: Int32, _ to: String)
    throws(SystemCallError)
  {
    _ = try retrying("renameat") { renameat(fromParent, from, toParent, to) }
  }

  /// Removes a file; a missing one is not an error.
  static func unlink(_ parent: Int32, _ name: String) throws(SystemCallError) {
    do {
      _ = try retrying("unlinkat") { unlinkat(parent, name, 0) }
    } catch where error.errno == ENOENT {}
  }

  static func lockExclusive(_ fd: Int32) throws(SystemCallError) {
    _ = try retrying("flock") { flock(fd, LOCK_EX) }
  }

  /// The names in a directory, except `.` and `..`. Takes ownership of nothing: `fd` stays open.
  static func names(in fd: Int32) throws(SystemCallError) -> [String] {
    let copy = try retrying("dup") { dup(fd) }
    guard let dir = fdopendir(copy) else {
      let code = errno
      Glibc.close(copy)
      throw SystemCallError(call: "fdopendir", errno: code)
    }
    defer { closedir(dir) }
    rewinddir(dir)
    var names: [String] = []
    while true {
      errno = 0
      guard let entry = readdir(dir) else {
        if errno != 0 { throw SystemCallError(call: "readdir", errno: errno) }
        break
      }
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}

#if os(Linux)
  /// `syncfs(2)`, which Glibc declares only under `_GNU_SOURCE`.
  @_silgen_name("syncfs")
  private func linuxSyncfs(_ fd: Int32) -> Int32
#endif

extension stat {
  /// Whether this is a regular file.
  var isRegularFile: Bool { (st_mode & S_IFMT) == S_IFREG }
  /// Whether this is a symbolic link.
  var isSymbolicLink: Bool { (st_mode & S_IFMT) == S_IFLNK }
  /// The change time in nanoseconds (cannot be set by `utimes`).
  var changeTimeNanoseconds: Int64 {
    Int64(st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(st_ctim.tv_nsec)
  }
  /// The modification time in nanoseconds.
  var modificationTimeNanoseconds: Int64 {
    Int64(st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st_mtim.tv_nsec)
  }
}
