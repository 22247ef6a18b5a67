/// The names of the lock files that the Secret Service stores and sealing-key provider
/// (`OfflineTTLSecretService`) make in their configuration's lock directory:
/// `secret-service.<application id>.<kind>.lock` (kinds `marks`, `items` and `sealing-key`),
/// every character of the id outside `[A-Za-z0-9._-]` replaced by `_`.
///
/// Declared beside the file stores because a lock directory may be the store directory itself
/// (the command-line tool's is): the provider's lock file is then made before the store's first
/// file, and a new ``DirectoryCacheStore`` must tell these names from another directory's
/// entries (``matches(_:)``).
package enum KeyringLockFileName {
  static let prefix = "secret-service."
  static let suffix = ".lock"

  /// The lock file's name for one application id and kind of secret (a collision of two ids
  /// that differ only outside `[A-Za-z0-9._-]` only serializes more).
  ///
  /// The name is at most 255 bytes, the longest a directory entry may have: an id too long for
  /// that (the command-line tool's holds the whole store path) keeps its first characters, then
  /// `-` and a digest of the whole safe id (`FileSystemName.bounded`), so the name still
  /// ``matches(_:)``; a name that fits is the same as in every earlier version.
  ///
  /// - Parameters:
  ///   - applicationID: The configuration's application id (not empty).
  ///   - kind: `marks`, `items` or `sealing-key`.
  /// - Returns: `secret-service.<safe id>.<kind>.lock`.
  package static func name(applicationID: String, kind: String) -> String {
    let safe = String(
      String.UnicodeScalarView(
        applicationID.unicodeScalars.map { isAllowed($0) ? $0 : "_" }))
    return FileSystemName.bounded(prefix + safe, "." + kind + suffix)
  }

  /// Whether `name` is one that a version of the library may have made in a lock directory:
  /// `secret-service.`, at least one character of `[A-Za-z0-9._-]`, `.lock`. This covers every
  /// kind, and the single `secret-service.<safe id>.lock` of the first Secret Service release.
  ///
  /// - Parameter name: A directory entry's name.
  /// - Returns: `true` for such a name.
  /// - Complexity: O(length of `name`).
  package static func matches(_ name: String) -> Bool {
    let scalars = Array(name.unicodeScalars)
    let head = Array(prefix.unicodeScalars)
    let tail = Array(suffix.unicodeScalars)
    guard scalars.count > head.count + tail.count,
      scalars.prefix(head.count).elementsEqual(head),
      scalars.suffix(tail.count).elementsEqual(tail)
    else { return false }
    return scalars.dropFirst(head.count).dropLast(tail.count).allSatisfy(isAllowed)
  }

  private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
    (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
      || (scalar >= "0" && scalar <= "9") || scalar == "." || scalar == "_" || scalar == "-"
  }
}
