import Synchronization

/// The subkeys of one ``SealingKey``, each derived with `crypto_kdf` for one purpose, so that no
/// key serves two algorithms or two kinds of file.
///
/// A class, never mutated: a repeated check hands one set of subkeys from the key's memory to
/// the stores and their kept reads with one reference count each, and tells the set it verified
/// a read with from the set of the operation asking by identity first (``isSame(as:)``).
final class SealKeys: Sendable {
  /// The `crypto_kdf` subkey ids. Never renumber: stored seals depend on them.
  enum Purpose: UInt64 {
    /// XChaCha20-Poly1305 key of item payloads.
    case items = 1
    /// BLAKE2b key of the item index's MAC.
    case index = 2
    /// BLAKE2b key of each clock-mark slot's MAC.
    case mark = 3
    /// The public key check value (not a key).
    case check = 4
  }

  /// Bytes of ``check``.
  static let checkLength = 8

  let items: [UInt8]
  let index: [UInt8]
  let mark: [UInt8]
  /// A public 8-byte value that names the key: stored beside seals so that a reader can tell
  /// "sealed with another key" (`seal_mismatch`) from "altered" (`*_unauthentic`). A forger can
  /// copy it but cannot make a seal verify with it.
  let check: [UInt8]

  /// The subkeys of `key`: those of the last key derived in this process when it is the same
  /// key (a repeated check derives nothing), else derived now.
  ///
  /// - Complexity: A 32-byte comparison; four `crypto_kdf` derivations for a new key.
  static func of(_ key: SealingKey) -> SealKeys {
    if let last = lastDerived.withLock({ $0 }),
      Sodium.equalInConstantTime(last.key[...], key.bytes)
    {
      return last.keys
    }
    let keys = SealKeys(key)
    lastDerived.withLock { $0 = (key.bytes, keys) }
    return keys
  }

  /// The last key ``of(_:)`` derived, with its subkeys.
  private static let lastDerived = Mutex<(key: [UInt8], keys: SealKeys)?>(nil)

  /// Whether `other` holds the same subkeys: the same set (a reference comparison), or, for
  /// two sets derived apart, the same subkeys compared in constant time.
  ///
  /// - Complexity: O(1): one reference comparison; 32-byte comparisons only for two sets.
  func isSame(as other: SealKeys) -> Bool {
    self === other
      || (Sodium.equalInConstantTime(items, other.items)
        && Sodium.equalInConstantTime(index, other.index)
        && Sodium.equalInConstantTime(mark, other.mark))
  }

  init(_ key: SealingKey) {
    items = Sodium.deriveSubkey(key.bytes, id: Purpose.items.rawValue)
    index = Sodium.deriveSubkey(key.bytes, id: Purpose.index.rawValue)
    mark = Sodium.deriveSubkey(key.bytes, id: Purpose.mark.rawValue)
    check = Array(
      Sodium.deriveSubkey(key.bytes, id: Purpose.check.rawValue).prefix(Self.checkLength))
  }
}
