/// Absolute paths that name one directory whatever the working directory, for what outlives one
/// process's working directory: the command line's keyring store (its lock directory and the
/// application id that names its secrets).
///
/// The working directory is read as bytes (``Syscalls/currentDirectory()``): a component that
/// is not valid UTF-8 stays an escape (``FileSystemName``), which every call of the seam turns
/// back into its bytes. Decoded with U+FFFD instead, the path named another directory, and
/// every use of it failed with `ENOENT`.
package enum AbsolutePath {
  /// `path` made absolute against the working directory, with empty and `.` components
  /// removed and each `..` removing the component before it (lexically, as a file URL's
  /// standardized path does: a valid UTF-8 path gets the same spelling as there).
  ///
  /// - Parameters:
  ///   - path: A path, relative or absolute; escapes allowed.
  ///   - system: The seam that reads the working directory.
  /// - Returns: An absolute path without `.`, `..`, empty components or a trailing `/`
  ///   (`/` for the root).
  /// - Throws: ``Errno`` from ``Syscalls/currentDirectory()`` for a relative path.
  /// - Complexity: O(n) in the length of the path and of the working directory.
  package static func lexical(_ path: String, system: Syscalls = Syscalls()) throws(Errno)
    -> String
  {
    let joined = path.hasPrefix("/") ? path : try system.currentDirectory() + "/" + path
    // Split on the byte `/` (not the Character: `/` and a combining mark are one Character).
    var kept: [String] = []
    for component in joined.utf8.split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
    {
      let name = String(decoding: component, as: UTF8.self)
      switch name {
      case ".": continue
      case "..": _ = kept.popLast()
      default: kept.append(name)
      }
    }
    return "/" + kept.joined(separator: "/")
  }

  /// `path` made absolute with every symbolic link, `.` and `..` among its directories resolved
  /// (`realpath(3)` of the directory that holds its last name), and its last name kept as it is:
  /// one directory has one such spelling however it is reached, through links or not. The last
  /// name is not resolved: a store whose own name is a symbolic link is refused where it is
  /// opened, and resolving it would name the link's target instead. A last name of `.` or `..`
  /// is resolved with the rest.
  ///
  /// - Parameters:
  ///   - path: A path, relative or absolute; escapes allowed.
  ///   - system: The seam that resolves it.
  /// - Returns: An absolute path with no symbolic link, `.` or `..` before its last name.
  /// - Throws: ``Errno`` from ``Syscalls/realPath(_:)``: `ENOENT` when a directory on the way
  ///   does not exist, `ENOTDIR`, `EACCES`, `ELOOP`.
  /// - Complexity: One lookup per component, and per symbolic link met.
  package static func resolvingLinks(_ path: String, system: Syscalls = Syscalls()) throws(Errno)
    -> String
  {
    var bytes = Array(path.utf8)
    while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
    let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
    let last = String(decoding: bytes[(slash.map { $0 + 1 } ?? 0)...], as: UTF8.self)
    guard !last.isEmpty, last != ".", last != ".." else {
      return try system.realPath(path.isEmpty ? "." : path)
    }
    let parent =
      slash.map { $0 == 0 ? "/" : String(decoding: bytes[..<$0], as: UTF8.self) } ?? "."
    let directory = try system.realPath(parent)
    return (directory == "/" ? "" : directory) + "/" + last
  }
}
