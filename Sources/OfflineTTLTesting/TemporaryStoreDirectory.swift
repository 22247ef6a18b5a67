import Foundation

/// A fresh, private directory under the system's temporary directory, for tests that need a real
/// store directory. Removed by ``remove()`` (call it in a `defer`).
public struct TemporaryStoreDirectory: Sendable {
  /// The directory's path (it exists, mode 0700, empty).
  public let path: String

  /// Creates the directory.
  ///
  /// - Parameter prefix: The start of its name, to tell tests apart when one is left behind.
  /// - Throws: The error from creating it.
  public init(prefix: String = "offline-ttl-test") throws {
    let base = FileManager.default.temporaryDirectory.path
    let path = base + "/" + prefix + "-" + UUID().uuidString
    try FileManager.default.createDirectory(
      atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    self.path = path
  }

  /// `path + "/" + name`.
  ///
  /// - Parameter name: A name inside the directory.
  /// - Returns: Its path.
  public func appending(_ name: String) -> String { path + "/" + name }

  /// Removes the directory and everything in it, ignoring errors.
  public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
