/// What `fstat` / `fstatat` report about a file, reduced to the fields the stores check.
@_spi(SystemCalls)
public struct FileStatus: Sendable, Hashable {
  /// The kind of file.
  public enum Kind: Sendable, Hashable {
    /// A regular file.
    case regular
    /// A directory.
    case directory
    /// A symbolic link (seen only through `fstatat` with `AT_SYMLINK_NOFOLLOW`).
    case symbolicLink
    /// A FIFO (named pipe): opening one can wait for a writer, reading one for data.
    case fifo
    /// A Unix-domain socket.
    case socket
    /// A character or block device.
    case device
    /// Anything else.
    case other

    /// `"a FIFO"`, `"a directory"`, … for messages.
    public var phrase: String {
      switch self {
      case .regular: "a regular file"
      case .directory: "a directory"
      case .symbolicLink: "a symbolic link"
      case .fifo: "a FIFO"
      case .socket: "a socket"
      case .device: "a device"
      case .other: "a special file"
      }
    }
  }

  /// The kind of file.
  public let kind: Kind
  /// The permission bits (`st_mode & 0o7777`), e.g. `0o600`.
  public let permissions: UInt32
  /// The size in bytes (`st_size`); for a sparse file, its apparent size.
  public let size: Int64
  /// The owner's user id.
  public let ownerID: UInt32
  /// The device and inode, which name the file (two names of one file compare equal).
  public let device: UInt64
  /// The inode number.
  public let inode: UInt64
  /// The status-change time (`st_ctim`) in nanoseconds since the epoch; it changes whenever the
  /// inode does (for a directory: an entry added, removed or renamed) and cannot be set.
  public let changeTimeNanoseconds: Int64
  /// The modification time (`st_mtim`) in nanoseconds since the epoch.
  public let modificationTimeNanoseconds: Int64

  /// Creates a status.
  public init(
    kind: Kind, permissions: UInt32, size: Int64, ownerID: UInt32, device: UInt64, inode: UInt64,
    changeTimeNanoseconds: Int64 = 0, modificationTimeNanoseconds: Int64 = 0
  ) {
    self.changeTimeNanoseconds = changeTimeNanoseconds
    self.modificationTimeNanoseconds = modificationTimeNanoseconds
    self.kind = kind
    self.permissions = permissions
    self.size = size
    self.ownerID = ownerID
    self.device = device
    self.inode = inode
  }

  /// Whether group or others may write it (`mode & 0o022 != 0`).
  public var isWritableByOthers: Bool { permissions & 0o022 != 0 }

  /// Whether any group or other permission bit is set (`mode & 0o077 != 0`).
  public var isAccessibleByOthers: Bool { permissions & 0o077 != 0 }
}
