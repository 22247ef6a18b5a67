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
}
