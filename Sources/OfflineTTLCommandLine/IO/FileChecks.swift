import Foundation
@_spi(SystemCalls) import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The command line's own checks of paths it is given (`--store`, `--put`), through the syscall
/// seam, with the real cause in every message: the `errno` name and text, e.g. `ENAMETOOLONG (File name too long)`.
enum FileChecks {
  /// What stands at a path, without following a symbolic link.
  enum Kind: Equatable {
    case directory, symbolicLink, other
    /// `lstat(2)` failed with this `errno`.
    case failed(Int32)
  }

  /// What stands at `path` (`lstat(2)` through the syscall seam).
  static func kind(_ path: String) -> Kind {
    do {
      switch try Syscalls().lstat(path).kind {
      case .directory: return .directory
      case .symbolicLink: return .symbolicLink
      default: return .other
      }
    } catch {
      return .failed(error.rawValue)
    }
  }

  /// `ENOENT (No such file or directory)`: the symbolic name and the C library's text.
  static func describe(_ code: Int32) -> String {
    let names: [Int32: String] = [
      ENOENT: "ENOENT", ENAMETOOLONG: "ENAMETOOLONG", ENOTDIR: "ENOTDIR", EACCES: "EACCES",
      EPERM: "EPERM", ELOOP: "ELOOP", EISDIR: "EISDIR", EIO: "EIO", EROFS: "EROFS",
      ENOSPC: "ENOSPC", EMFILE: "EMFILE", ENFILE: "ENFILE", ENXIO: "ENXIO", EAGAIN: "EAGAIN",
      EFBIG: "EFBIG",
    ]
    return "\(names[code] ?? "errno \(code)") (\(String(cString: strerror(code))))"
  }

  /// Reads the whole regular file at `path` (`open(2)` + `read(2)`, retried on `EINTR`), if it
  /// holds at most `maximumLength` bytes.
  ///
  /// The size is judged from `fstat(2)` before any byte is read, and again while reading (a file
  /// that grows meanwhile), so no input drives an allocation beyond `maximumLength` (a sparse
  /// file of any size is refused at once).
  ///
  /// - Returns: The bytes, or the failure: the `errno` (`ENOENT`, `EACCES`, `EISDIR`, ...) or
  ///   `EFBIG` for a file larger than `maximumLength`.
  /// - Complexity: O(n) in the file's size, at most `maximumLength`.
  static func contents(of path: String, maximumLength: Int) -> Result<Data, FileCheckError> {
    // Not through the syscall seam: an input file the user names may be a symbolic link, and the
    // seam never follows one (right for store files only).
    var fd: Int32
    repeat { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) } while fd < 0 && errno == EINTR
    guard fd >= 0 else {
      let failure = errno
      // A socket cannot be opened (ENXIO), nor a device without a driver: the same "not a
      // regular file" as a FIFO or device that opens.
      var info = stat()
      if failure != ENOENT && stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFREG
        && info.st_mode & S_IFMT != S_IFDIR
      {
        return .failure(FileCheckError(errno: EINVAL))
      }
      return .failure(FileCheckError(errno: failure))
    }
    defer { _ = close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
      // A FIFO or device could block or never end; a directory gives EISDIR anyway.
      return .failure(
        FileCheckError(errno: info.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL))
    }
    guard info.st_size <= maximumLength else {
      return .failure(FileCheckError(errno: EFBIG, size: Int64(info.st_size), limit: maximumLength))
    }
    var data = Data(capacity: Int(info.st_size))
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { FileDescriptorCalls.read(fd, into: $0) }
      if count < 0 { return .failure(FileCheckError(errno: Int32(-count))) }
      if count == 0 { return .success(data) }
      guard data.count + count <= maximumLength else {
        return .failure(FileCheckError(errno: EFBIG, size: nil, limit: maximumLength))
      }
      data.append(contentsOf: buffer[0..<count])
    }
  }
}

/// A file check failed with an `errno`.
struct FileCheckError: Error, Equatable, CustomStringConvertible {
  let errno: Int32
  /// For `EFBIG`: the file's size in bytes when `fstat` gave it (else it grew while read).
  var size: Int64?
  /// For `EFBIG`: the largest size accepted, in bytes.
  var limit: Int?

  init(errno: Int32, size: Int64? = nil, limit: Int? = nil) {
    self.errno = errno
    self.size = size
    self.limit = limit
  }

  /// `ENOENT (No such file or directory)`; `EINVAL` for a file that is not a regular file;
  /// `EFBIG` with the size and the limit.
  var description: String {
    switch errno {
    case EINVAL: return "not a regular file"
    case EFBIG:
      let size = size.map { "\($0) bytes" } ?? "it grew while being read and"
      return "\(size) is larger than the \(Self.bytes(limit ?? 0)) maximum of an item"
        + " (\(FileChecks.describe(EFBIG)))"
    default: return FileChecks.describe(errno)
    }
  }

  /// `1 GiB` for 2^30, else the byte count.
  private static func bytes(_ count: Int) -> String {
    count == 1 << 30 ? "1 GiB" : "\(count)-byte"
  }
}
