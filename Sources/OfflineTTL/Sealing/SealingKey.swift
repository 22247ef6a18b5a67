/// The 256-bit key that seals a store. Every key the store uses is derived from it, one per
/// purpose, with libsodium's `crypto_kdf` (item encryption, the index MAC, the clock-mark MAC),
/// so one key never serves two algorithms.
///
/// Where the key lives is the caller's choice, through a ``SealingKeyProvider``; the store never
/// records it. Its ``description`` never shows the key.
public struct SealingKey: Sendable, CustomStringConvertible {
  /// Bytes in a key: 32.
  public static let byteCount = 32

  let bytes: [UInt8]

  /// Wraps 32 bytes of key material.
  ///
  /// - Parameter bytes: Exactly ``byteCount`` bytes, uniformly random (use ``random()``).
  /// - Throws: ``SealingKeyError`` with code ``SealingKeyError/Code/wrongSize`` for any other
  ///   length.
  public init(bytes: some Sequence<UInt8>) throws(SealingKeyError) {
    let array = Array(bytes)
    guard array.count == Self.byteCount else {
      throw SealingKeyError(
        code: .wrongSize,
        reason: "a sealing key is \(Self.byteCount) bytes, got \(array.count)")
    }
    self.bytes = array
  }

  /// A new key from libsodium's random source (`randombytes_buf`).
  ///
  /// - Returns: 32 random bytes as a key.
  public static func random() -> SealingKey {
    // The size is right by construction.
    try! SealingKey(bytes: Sodium.randomBytes(byteCount))
  }

  /// Calls `body` with the key's bytes, for a provider that stores them (never log them).
  ///
  /// - Parameter body: Reads the 32 bytes; they are valid only during the call.
  /// - Returns: What `body` returns.
  public func withUnsafeBytes<Result, Failure: Error>(
    _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    let result = bytes.withUnsafeBytes { raw in
      Swift.Result { () throws(Failure) -> Result in try body(raw) }
    }
    return try result.get()
  }

  /// `SealingKey(check <16 hex digits>)`: a public check value derived from the key (its own
  /// `crypto_kdf` subkey, truncated), which tells two keys apart without revealing either.
  public var description: String {
    "SealingKey(check \(SealKeys(self).check.map { String($0, radix: 16).leftPadded(2) }.joined()))"
  }
}

extension String {
  fileprivate func leftPadded(_ width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
