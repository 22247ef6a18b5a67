/// The sealed items' cipher: XChaCha20-Poly1305, the IETF AEAD with a 24-byte random nonce
/// (draft-irtf-cfrg-xchacha-03, section 2.3), composed from two well-kept libraries as that
/// draft and libsodium compose it:
///
/// 1. libsodium's HChaCha20 (`crypto_core_hchacha20`) turns the key and the nonce's first 16
///    bytes into a 32-byte subkey;
/// 2. libcrypto's ChaCha20-Poly1305 (RFC 8439) seals with that subkey and the 12-byte nonce
///    `00 00 00 00` followed by the nonce's last 8 bytes.
///
/// These are the bytes libsodium's `crypto_aead_xchacha20poly1305_ietf_*` functions write and
/// read (its own implementation is these two steps), so a store sealed by either opens with the
/// other: `XChaCha20Poly1305Tests` checks the draft's published vector and libsodium's output at
/// sizes around the ciphers' block sizes, and that every changed byte is refused. libcrypto does
/// the bulk because it is faster: 1.6x-1.9x libsodium 1.0.18 on the CI machine's AVX2 CPU for a
/// 1 MiB payload (`Benchmarks/README.md`). When libcrypto cannot provide the cipher
/// (``LibCrypto/chaCha20Poly1305`` is `nil`), libsodium's own functions run instead.
enum XChaCha20Poly1305 {
  /// Which library does the ChaCha20-Poly1305 step.
  enum Engine: CaseIterable, Sendable {
    /// OpenSSL's libcrypto, after libsodium's HChaCha20 (the default when libcrypto has it).
    case libcrypto
    /// libsodium's `crypto_aead_xchacha20poly1305_ietf_*` alone.
    case libsodium
  }

  /// The engine every sealed item uses in this process.
  static let engine: Engine = LibCrypto.chaCha20Poly1305 != nil ? .libcrypto : .libsodium

  /// Encrypts `message` into `output` (the same size; it may be `message`'s own memory) and
  /// writes its 16-byte tag into `tag`, authenticated together with `associatedData`.
  ///
  /// - Parameters:
  ///   - nonce: 24 bytes, never used twice with one key (the store draws them at random).
  ///   - key: 32 bytes.
  /// - Complexity: O(message + associated data).
  static func sealDetached(
    _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
    tag: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, engine: Engine = engine
  ) {
    precondition(nonce.count == Sodium.nonceLength && key.count == Sodium.keyLength)
    precondition(output.count == message.count && tag.count == Sodium.tagLength)
    if engine == .libcrypto {
      let sealed = withIETFKey(key, nonce: nonce) { subkey, shortNonce in
        LibCrypto.seal(
          message, into: output, tag: tag, associatedData: associatedData, nonce: shortNonce,
          key: subkey)
      }
      if sealed { return }
      // libcrypto failed (no memory): libsodium writes the same bytes.
    }
    Sodium.sealDetached(
      message, into: output, tag: tag, associatedData: associatedData, nonce: nonce, key: key)
  }

  /// Checks `tag` over `associatedData` and the ciphertext in `buffer` and decrypts `buffer` in
  /// place: on success it holds the plaintext.
  ///
  /// - Returns: `false` when `tag` is not 16 bytes or does not verify (any byte changed, another
  ///   key, nonce or associated data); `buffer` is then zeroed: no unauthenticated plaintext is
  ///   left in it.
  /// - Complexity: O(buffer + associated data).
  static func openInPlace(
    _ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
    associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    key: UnsafeRawBufferPointer, engine: Engine = engine
  ) -> Bool {
    precondition(nonce.count == Sodium.nonceLength && key.count == Sodium.keyLength)
    guard engine == .libcrypto else {
      return Sodium.openInPlace(
        buffer, tag: tag, associatedData: associatedData, nonce: nonce, key: key)
    }
    return withIETFKey(key, nonce: nonce) { subkey, shortNonce in
      LibCrypto.openInPlace(
        buffer, tag: tag, associatedData: associatedData, nonce: shortNonce, key: subkey)
    }
  }

  /// Calls `body` with the HChaCha20 subkey of `key` and the nonce's first 16 bytes, and the
  /// 12-byte IETF nonce (4 zero bytes, then the nonce's last 8); the subkey is zeroed after.
  private static func withIETFKey<R>(
    _ key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R
  ) -> R {
    let size = Sodium.keyLength + LibCrypto.nonceLength
    return withUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { scratch in
      let subkey = UnsafeMutableRawBufferPointer(rebasing: scratch[..<Sodium.keyLength])
      let shortNonce = UnsafeMutableRawBufferPointer(rebasing: scratch[Sodium.keyLength...])
      defer { Sodium.zero(scratch) }
      Sodium.hChaCha20(key, input: UnsafeRawBufferPointer(rebasing: nonce[..<16]), into: subkey)
      shortNonce.initializeMemory(as: UInt8.self, repeating: 0)
      shortNonce.baseAddress!.advanced(by: 4).copyMemory(
        from: nonce.baseAddress!.advanced(by: 16), byteCount: 8)
      return body(UnsafeRawBufferPointer(subkey), UnsafeRawBufferPointer(shortNonce))
    }
  }
}

/// The sealed items' cipher, for the benchmark's cipher floor (`offline-ttl-bench seal`):
/// ``XChaCha20Poly1305`` with the engine this process uses. Not API: it may change with any
/// release.
@_spi(Benchmarks) public enum ItemCipher {
  /// `"libcrypto"` or `"libsodium"`: which library does the ChaCha20-Poly1305 step.
  public static var engine: String { "\(XChaCha20Poly1305.engine)" }

  /// ``XChaCha20Poly1305/sealDetached(_:into:tag:associatedData:nonce:key:engine:)``.
  public static func sealDetached(
    _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
    tag: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
  ) {
    XChaCha20Poly1305.sealDetached(
      message, into: output, tag: tag, associatedData: associatedData, nonce: nonce, key: key)
  }

  /// ``XChaCha20Poly1305/openInPlace(_:tag:associatedData:nonce:key:engine:)``.
  public static func openInPlace(
    _ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
    associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    key: UnsafeRawBufferPointer
  ) -> Bool {
    XChaCha20Poly1305.openInPlace(
      buffer, tag: tag, associatedData: associatedData, nonce: nonce, key: key)
  }
}
