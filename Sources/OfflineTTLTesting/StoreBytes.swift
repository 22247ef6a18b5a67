import Foundation

/// Every entry under a directory, never following a link: its type, mode and, for a regular
/// file, its bytes. Tests compare a store before and after an offline path, which must change
/// none of them.
public struct StoreBytes: Equatable, Sendable, CustomStringConvertible {
  /// One entry.
  public struct Entry: Equatable, Sendable {
    /// The file type (`NSFileTypeRegular`, `NSFileTypeDirectory`, ...).
    public var type: String
    /// The permission bits.
    public var mode: Int
    /// The contents of a regular file; `nil` for any other type.
    public var bytes: Data?
  }

  /// Every entry by its path relative to the directory.
  public let entries: [String: Entry]

  /// Reads every entry under `root`.
  ///
  /// - Parameter root: The directory.
  /// - Throws: The error from listing it or reading an entry.
  /// - Complexity: O(total size of the files).
  public init(_ root: String) throws {
    var entries: [String: Entry] = [:]
    for path in try FileManager.default.subpathsOfDirectory(atPath: root) {
      let full = root + "/" + path
      let attributes = try FileManager.default.attributesOfItem(atPath: full)
      let type = (attributes[.type] as? FileAttributeType)?.rawValue ?? "unknown"
      let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
      let bytes =
        type == FileAttributeType.typeRegular.rawValue
        ? try Data(contentsOf: URL(fileURLWithPath: full)) : nil
      entries[path] = Entry(type: type, mode: mode, bytes: bytes)
    }
    self.entries = entries
  }

  /// The paths whose entry differs from `other`'s (added, removed or changed), sorted.
  ///
  /// - Parameter other: The other snapshot.
  /// - Returns: The paths.
  public func differences(from other: StoreBytes) -> [String] {
    Set(entries.keys).union(other.entries.keys).filter { entries[$0] != other.entries[$0] }
      .sorted()
  }

  /// The paths, sorted, comma-separated.
  public var description: String { entries.keys.sorted().joined(separator: ", ") }

  /// Whether a path exists in the snapshot.
  ///
  /// - Parameter path: A path relative to the directory.
  /// - Returns: Whether it was there.
  public func contains(_ path: String) -> Bool { entries[path] != nil }
}
