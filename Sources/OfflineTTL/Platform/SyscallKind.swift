/// Which system call the seam is making; a ``SyscallFaultPlan`` counts calls and injects errors
/// per kind. Every libc call OfflineTTL makes for its stores is one of these.
@_spi(Testing)
public enum SyscallKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// `open(2)`.
  case open
  /// `openat(2)`.
  case openat
  /// `read(2)`.
  case read
  /// `pread(2)`.
  case pread
  /// `write(2)`.
  case write
  /// `pwrite(2)`.
  case pwrite
  /// `fsync(2)`.
  case fsync
  /// `fdatasync(2)` (on Darwin, `fsync`).
  case fdatasync
  /// `rename(2)`.
  case rename
  /// `renameat(2)`.
  case renameat
  /// `linkat(2)`.
  case linkat
  /// `unlink(2)`.
  case unlink
  /// `unlinkat(2)`.
  case unlinkat
  /// `mkdir(2)`.
  case mkdir
  /// `mkdirat(2)`.
  case mkdirat
  /// `fstat(2)`.
  case fstat
  /// `fstatat(2)` with `AT_SYMLINK_NOFOLLOW`, and `lstat(2)`.
  case fstatat
  /// `flock(2)`.
  case flock
  /// `close(2)`. Never retried on `EINTR`; the descriptor is released even when it fails.
  case close
  /// `ftruncate(2)`.
  case ftruncate
  /// `fchmod(2)`.
  case fchmod
  /// `fchmodat(2)` with `AT_SYMLINK_NOFOLLOW`.
  case fchmodat
  /// `syncfs(2)` (Linux; on Darwin, `sync(2)`): one flush of a whole file system.
  case syncfs
  /// Listing a directory (`fdopendir` + `readdir(3)`, counted once per listing).
  case readdir
  /// `inotify_init1(2)` and `inotify_add_watch(2)` (a change watch is set up; its reads are
  /// ``poll`` and, once it holds events, ``read``).
  case inotify
  /// `poll(2)` with a zero timeout: whether a descriptor has anything to read, without waiting.
  case poll
  /// `fstatfs(2)` (which file system holds a store).
  case fstatfs
  /// `getcwd(3)`: the working directory, for a path that must name the same place from any
  /// directory (a keyring's lock directory and application id).
  case getcwd
  /// `realpath(3)`: a path with every symbolic link, `.` and `..` resolved.
  case realpath

  /// The C name, e.g. `"fdatasync"`.
  public var description: String { rawValue }
}
