#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The access mode and options of an `open` through the seam. `O_NOFOLLOW | O_CLOEXEC` are
/// always added by the seam and cannot be left out.
@_spi(SystemCalls)
public struct OpenFlags: OptionSet, Sendable, Hashable {
  /// The raw C flags.
  public let rawValue: Int32

  /// Wraps raw C flags.
  public init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// `O_RDONLY` (zero: the default access mode).
  public static let readOnly = OpenFlags([])
  /// `O_WRONLY`.
  public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
  /// `O_RDWR`.
  public static let readWrite = OpenFlags(rawValue: O_RDWR)
  /// `O_CREAT`: create the file if missing (give a mode).
  public static let create = OpenFlags(rawValue: O_CREAT)
  /// `O_EXCL`: with ``create``, fail with `EEXIST` if the name exists (even as a symbolic link).
  public static let exclusive = OpenFlags(rawValue: O_EXCL)
  /// `O_TRUNC`.
  public static let truncate = OpenFlags(rawValue: O_TRUNC)
  /// `O_DIRECTORY`: fail with `ENOTDIR` unless the path is a directory.
  public static let directory = OpenFlags(rawValue: O_DIRECTORY)
  /// `O_NONBLOCK`: never block opening a FIFO or device found where a file was expected.
  public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
  /// `O_NOATIME` on Linux (Glibc declares it only under `_GNU_SOURCE`): reading through the
  /// descriptor does not update the file's access time, so a read is not an inode change that a
  /// later `fdatasync` must write. Refused with `EPERM` unless the caller owns the file (or has
  /// `CAP_FOWNER`): open again without it to report the file's real problem. Empty elsewhere.
  #if os(Linux)
    public static let noAccessTime = OpenFlags(rawValue: 0o1_000_000)
  #else
    public static let noAccessTime = OpenFlags([])
  #endif
  /// `O_PATH` on Linux (declared by Glibc only under `_GNU_SOURCE`): a descriptor that names a
  /// file or directory without opening it for reading (it needs search permission on the
  /// directories above only); usable for `fstat`, `fstatat`, `fstatfs` and `/proc/self/fd/N`.
  /// Empty elsewhere.
  #if os(Linux)
    public static let pathOnly = OpenFlags(rawValue: 0o10_000_000)
  #else
    public static let pathOnly = OpenFlags([])
  #endif
}

/// A `flock(2)` operation.
@_spi(SystemCalls)
public struct LockOperation: Sendable, Hashable {
  /// The raw C operation.
  public let rawValue: Int32

  /// `LOCK_SH`: shared; waits while an exclusive lock is held.
  public static let shared = LockOperation(rawValue: LOCK_SH)
  /// `LOCK_EX`: exclusive; waits while any other lock is held.
  public static let exclusive = LockOperation(rawValue: LOCK_EX)
  /// `LOCK_UN`: release.
  public static let unlock = LockOperation(rawValue: LOCK_UN)

  /// The same operation without waiting: `EWOULDBLOCK` when the lock is taken.
  public var nonBlocking: LockOperation { LockOperation(rawValue: rawValue | LOCK_NB) }
}
