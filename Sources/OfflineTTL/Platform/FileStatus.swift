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
  /// The number of names the file has (`st_nlink`): 1 for a file with one name, more for a file
  /// hard-linked elsewhere, 0 for a file whose last name was removed while it was open; a
  /// directory has at least 2.
  public let linkCount: UInt64

  /// Creates a status.
  ///
  /// - Parameters:
  ///   - kind: The kind of file.
  ///   - permissions: The permission bits (`st_mode & 0o7777`).
  ///   - size: The size in bytes.
  ///   - ownerID: The owner's user id.
  ///   - device: The device id.
  ///   - inode: The inode number.
  ///   - changeTimeNanoseconds: `st_ctim` in nanoseconds since the epoch.
  ///   - modificationTimeNanoseconds: `st_mtim` in nanoseconds since the epoch.
  ///   - linkCount: `st_nlink`, the number of names (1 unless given).
  public init(
    kind: Kind, permissions: UInt32, size: Int64, ownerID: UInt32, device: UInt64, inode: UInt64,
    changeTimeNanoseconds: Int64 = 0, modificationTimeNanoseconds: Int64 = 0, linkCount: UInt64 = 1
  ) {
    self.linkCount = linkCount
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

  /// Whether a file that is not a directory has another name besides the one it was opened by
  /// (`st_nlink > 1`): a hard link, made from outside the store or into it. A count of 0 (the
  /// name was removed or replaced while the file was open, as a sign-in's rename does) is not a
  /// second name.
  public var hasOtherNames: Bool { kind != .directory && linkCount > 1 }

  /// Whether any group or other permission bit is set (`mode & 0o077 != 0`).
  public var isAccessibleByOthers: Bool { permissions & 0o077 != 0 }
}
