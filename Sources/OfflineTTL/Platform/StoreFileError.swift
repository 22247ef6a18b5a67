/// Why ``SecureStoreFiles`` refused a path of a store, or which system call failed on it.
///
/// Each store turns it into its own typed error (for example
/// ``CacheStoreError/Code/insecureStore`` or ``CacheStoreError/Code/notARegularFile``), keeping
/// ``path`` in the reason.
@_spi(SystemCalls)
public struct StoreFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong.
  public enum Problem: Sendable, Hashable {
    /// A system call failed with this error number.
    case system(Errno)
    /// A symbolic link stands where a file or directory of the store belongs; never followed.
    case symbolicLink
    /// Something other than a regular file (a FIFO, socket, device or directory) stands where a
    /// file belongs. It is never waited on.
    case notRegularFile(FileStatus.Kind)
    /// Something other than a directory stands where a directory belongs.
    case notDirectory(FileStatus.Kind)
    /// The file or directory is owned by another user, or group or others may write it (or,
    /// for a file that must be private, read it: ``SecureStoreFiles/checkPrivate(_:path:)``).
    case insecure(ownerID: UInt32, permissions: UInt32, effectiveUserID: UInt32)
    /// A file of the store has other names besides its own (`st_nlink` is this count, more than
    /// 1): a hard link made into the store or out of it. Whoever holds the other name could read
    /// or change it, and a write in place would change the other name's bytes too. Counted with
    /// ``StoreFileError/isInsecure``; only the online path replaces the file.
    case hardLinked(linkCount: UInt64)
    /// A length read from disk (or a file's size) is beyond what the format allows.
    case oversized(size: Int64, limit: Int64)
    /// A store directory's path ends in `..` (`lnk/..`, `a/b/..`): the kernel would follow the
    /// names before it, symbolic links included, to whatever directory is above, so the store
    /// directory's own name could not be opened without following a link. Nothing was opened.
    case endsInParentName
  }

  /// What is wrong.
  public let problem: Problem
  /// The path concerned, as the store spells it (store directory + names inside it).
  public let path: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - problem: What is wrong.
  ///   - path: The path concerned.
  public init(_ problem: Problem, path: String) {
    self.problem = problem
    self.path = path
  }

  /// The error number, for ``Problem/system(_:)``.
  public var errno: Errno? {
    if case .system(let errno) = problem { return errno }
    return nil
  }

  /// Whether the problem is an owner, a mode
  /// (``Problem/insecure(ownerID:permissions:effectiveUserID:)``) or a second name
  /// (``Problem/hardLinked(linkCount:)``): the file or directory cannot be trusted as the
  /// store's own.
  public var isInsecure: Bool {
    switch problem {
    case .insecure, .hardLinked: true
    default: false
    }
  }

  /// Whether the problem is a second name (``Problem/hardLinked(linkCount:)``): the online path
  /// replaces such a file (removes the store's name and creates a new file), leaving the other
  /// name's bytes as they were.
  public var isHardLinked: Bool {
    if case .hardLinked = problem { return true }
    return false
  }

  /// Whether the problem is a wrong file type or a symbolic link where a store file or directory
  /// belongs.
  public var isWrongType: Bool {
    switch problem {
    case .symbolicLink, .notRegularFile, .notDirectory: true
    default: false
    }
  }

  /// What a user does about a ``Problem/hardLinked(linkCount:)`` file, appended to its message
  /// by the stores: an online sign-in replaces it, or the other name is removed.
  public static let hardLinkAdvice =
    "; sign in online (the store's name then gets a new file of its own and the other name keeps"
    + " its bytes), or remove the other name (find <mount point> -xdev -samefile <path> lists it)"

  /// What a user does about a cache item whose file is ``Problem/hardLinked(linkCount:)``:
  /// removing the other name keeps the item (it reads again); an online sign-in that does not
  /// write the item again drops it (a read refuses it), and the other name keeps its bytes.
  public static let itemHardLinkAdvice =
    "; remove the other name (find <mount point> -xdev -samefile <path> lists it) and the item"
    + " reads again; an online sign-in that does not write it again drops it (the other name"
    + " keeps its bytes)"

  /// A sentence naming the path and the cause, e.g. `"/s/cache/items/k is a FIFO, not a regular
  /// file"`.
  public var description: String {
    switch problem {
    case .system(let errno):
      return "\(path): \(errno)"
    case .symbolicLink:
      return "\(path) is a symbolic link (symbolic links are not followed)"
    case .notRegularFile(let kind):
      return "\(path) is \(kind.phrase), not a regular file"
    case .notDirectory(let kind):
      return "\(path) is \(kind.phrase), not a directory"
    case .insecure(let owner, let permissions, let user):
      if owner != user {
        return "\(path) is owned by uid \(owner), not by this user (uid \(user))"
      }
      if permissions & 0o022 == 0 {
        return
          "\(path) has mode 0\(String(permissions, radix: 8)): group or others may read it"
          + " (it must be 0600)"
      }
      return
        "\(path) has mode 0\(String(permissions, radix: 8)): group or others may write it"
    case .hardLinked(let count):
      return
        "\(path) has \(count) names (a hard link): another name, outside the store or in it,"
        + " shares its bytes"
    case .oversized(let size, let limit):
      return "\(path) has \(size) bytes, more than the \(limit) its format allows"
    case .endsInParentName:
      return
        "\(path) ends in '..': name the store directory itself (its own name is never followed"
        + " through a symbolic link), e.g. by its absolute path"
    }
  }
}
