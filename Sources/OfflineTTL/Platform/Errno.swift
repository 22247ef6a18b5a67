#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An error number from the C library (`errno`), typed so that it cannot be mixed with other
/// integers (the shape of apple/swift-system's `Errno`).
///
/// Thrown by the syscall seam (`Syscalls`); stores turn it into ``StoreError`` and keep the raw
/// value (``StoreError/errno``). Public under the `SystemCalls` SPI, with the rest of the seam,
/// for the package's other modules; fault plans (``SyscallFaultPlan``) name the error to inject.
@_spi(SystemCalls)
public struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
  /// The raw C value, e.g. `5` for `EIO` on Linux.
  public let rawValue: Int32

  /// Wraps a raw C value.
  ///
  /// - Parameter rawValue: An `errno` value.
  public init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// `EINTR`: interrupted by a signal. The seam retries it (except for `close`).
  public static let interrupted = Errno(rawValue: EINTR)
  /// `EIO`: an I/O error on the device.
  public static let ioError = Errno(rawValue: EIO)
  /// `ENOSPC`: no space left on the device.
  public static let noSpace = Errno(rawValue: ENOSPC)
  /// `EROFS`: read-only file system.
  public static let readOnlyFileSystem = Errno(rawValue: EROFS)
  /// `ENOENT`: no such file or directory.
  public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
  /// `EEXIST`: the file exists.
  public static let fileExists = Errno(rawValue: EEXIST)
  /// `ELOOP`: a symbolic link where `O_NOFOLLOW` forbids one (Linux: 40).
  public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
  /// `EISDIR`: a directory where a file was expected.
  public static let isDirectory = Errno(rawValue: EISDIR)
  /// `ENOTDIR`: a file where a directory was expected.
  public static let notDirectory = Errno(rawValue: ENOTDIR)
  /// `EACCES`: permission denied.
  public static let permissionDenied = Errno(rawValue: EACCES)
  /// `EPERM`: operation not permitted.
  public static let notPermitted = Errno(rawValue: EPERM)
  /// `EWOULDBLOCK` / `EAGAIN`: a non-blocking `flock` found the lock taken.
  public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
  /// `EBADF`: not an open file descriptor.
  public static let badFileDescriptor = Errno(rawValue: EBADF)
  /// `ENXIO`: no such device or address; a non-blocking open for writing of a FIFO that has no
  /// reader, or an open of a socket.
  public static let noDeviceOrAddress = Errno(rawValue: ENXIO)
  /// `EFBIG`: a file or length beyond what is allowed.
  public static let fileTooLarge = Errno(rawValue: EFBIG)
  /// `EINVAL`: invalid argument.
  public static let invalidArgument = Errno(rawValue: EINVAL)
  /// `EOPNOTSUPP`: not supported (`fchmodat` without following, on a symbolic link or where
  /// the C library cannot do it).
  public static let notSupported = Errno(rawValue: EOPNOTSUPP)
  /// `ENOSYS`: the system call does not exist here.
  public static let notImplemented = Errno(rawValue: ENOSYS)
  /// `ETIMEDOUT`: a bounded wait ran out (``Syscalls/flock(_:_:waitingAtMost:)``: another
  /// holder kept the lock past the limit; `flock(2)` itself never returns it).
  public static let timedOut = Errno(rawValue: ETIMEDOUT)

  /// The C name where known (`"EIO"`), else `"errno N"`; the message is ``message``.
  public var name: String {
    switch rawValue {
    case EINTR: "EINTR"
    case EIO: "EIO"
    case ENOSPC: "ENOSPC"
    case EROFS: "EROFS"
    case ENOENT: "ENOENT"
    case EEXIST: "EEXIST"
    case ELOOP: "ELOOP"
    case EISDIR: "EISDIR"
    case ENOTDIR: "ENOTDIR"
    case EACCES: "EACCES"
    case EPERM: "EPERM"
    case EWOULDBLOCK: "EWOULDBLOCK"
    case EBADF: "EBADF"
    case EINVAL: "EINVAL"
    case ENXIO: "ENXIO"
    case EFBIG: "EFBIG"
    case EDQUOT: "EDQUOT"
    case ENAMETOOLONG: "ENAMETOOLONG"
    case ETIMEDOUT: "ETIMEDOUT"
    case EMFILE: "EMFILE"
    case ENFILE: "ENFILE"
    case ENOMEM: "ENOMEM"
    default: "errno \(rawValue)"
    }
  }

  /// The C library's message for this error (`strerror`), e.g. `"Input/output error"`.
  public var message: String { Syscalls.errorMessage(rawValue) }

  /// `"EIO (Input/output error)"`.
  public var description: String { "\(name) (\(message))" }
}
