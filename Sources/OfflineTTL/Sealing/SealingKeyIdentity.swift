/// What names the key a ``SealingKeyProvider`` loads, so that two providers can be told to load
/// the same key however each was configured (``SealingKeyProvider/keyIdentity()``).
///
/// Two identities are equal when their ``kind`` and every one of their ``parts`` are equal, part
/// by part: no text of one part can run into the next (a keyring key `a/b` of application `c`
/// is not the key `b` of application `c/a`).
public struct SealingKeyIdentity: Sendable, Hashable, CustomStringConvertible {
  /// The kind of place the key is kept in, for example `key file` or `Secret Service key`.
  public let kind: String
  /// What names the key among the keys of its kind, for example a key file's resolved path, or
  /// a keyring key's application id and name.
  public let parts: [String]

  /// Creates an identity.
  ///
  /// - Parameters:
  ///   - kind: The kind of place the key is kept in.
  ///   - parts: What names the key among the keys of that kind.
  public init(kind: String, parts: [String]) {
    self.kind = kind
    self.parts = parts
  }

  /// The kind, then the parts separated by `, `: for reading, not for comparing (compare the
  /// identities).
  public var description: String {
    parts.isEmpty ? kind : kind + " " + parts.joined(separator: ", ")
  }
}
