import CLibCrypto

/// The only file that calls OpenSSL's libcrypto: the ChaCha20-Poly1305 AEAD of RFC 8439 (the
/// IETF construction: 256-bit key, 96-bit nonce, 16-byte Poly1305 tag), detached tag, in place
/// allowed. No cryptography of our own: each function is libcrypto's `EVP_` AEAD interface with
/// typed, length-checked arguments. ``XChaCha20Poly1305`` builds the item cipher on it.
///
/// libcrypto is initialized once per process, on first use, through a `static let`, without
/// reading OpenSSL's configuration file (`OPENSSL_INIT_NO_LOAD_CONFIG`: no file read, no
/// provider or engine loaded because of the environment) and without a clean-up at exit
/// (`OPENSSL_INIT_NO_ATEXIT`: a thread still opening an item while the process exits never
/// meets freed state), and the cipher is fetched once from the default provider. A fetched `EVP_CIPHER` may be shared by threads; each call makes its
/// own `EVP_CIPHER_CTX`.
enum LibCrypto {
  /// Bytes in a ChaCha20-Poly1305 (IETF) nonce: 12.
  static let nonceLength = 12

  /// libcrypto's ChaCha20-Poly1305, or `nil` when it cannot be had (libcrypto failed to
  /// initialize, or its default provider has no such cipher): ``XChaCha20Poly1305`` then uses
  /// libsodium's own implementation, which gives the same bytes. `nonisolated(unsafe)`: an
  /// `EVP_CIPHER` is immutable once fetched and OpenSSL documents it as shareable between
  /// threads (`EVP_CIPHER_fetch(3)`, "Fetching algorithms"); it is never freed.
  nonisolated(unsafe) static let chaCha20Poly1305: OpaquePointer? = {
    let options = UInt64(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT)
    guard OPENSSL_init_crypto(options, nil) == 1 else { return nil }
    return EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil)
  }()

  /// libcrypto's `EVP_*Update` take an `Int32` length: longer messages go in pieces of this many
  /// bytes (the payload limit, 1 GiB, is one piece).
  private static let pieceLength = 1 << 30

  /// Encrypts `message` into `output` (the same size; it may be `message`'s own memory) and
  /// writes the 16-byte tag over `associatedData` and the ciphertext into `tag`.
  ///
  /// - Returns: `false` only when libcrypto reports a failure (no cipher, no memory); `output`
  ///   and `tag` then hold nothing usable.
  /// - Complexity: O(message + associated data).
  static func seal(
    _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
    tag: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
  ) -> Bool {
    precondition(output.count == message.count && tag.count == Sodium.tagLength)
    return run(encrypting: true, key: key, nonce: nonce) { context in
      guard feed(context, associatedData: associatedData),
        crypt(context, message, into: output)
      else { return false }
      var last: Int32 = 0
      var spare: UInt8 = 0
      guard EVP_EncryptFinal_ex(context, &spare, &last) == 1 else { return false }
      return EVP_CIPHER_CTX_ctrl(
        context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), tag.baseAddress) == 1
    }
  }

  /// Decrypts `buffer` in place and checks `tag` over `associatedData` and the ciphertext.
  /// libcrypto decrypts as it goes and checks the tag at the end: when the tag does not verify,
  /// this function zeroes `buffer` before it returns, so no unauthenticated plaintext leaves it.
  ///
  /// - Returns: `false` when `tag` is not 16 bytes or does not verify (any byte changed, another
  ///   key, nonce or associated data), or libcrypto fails; `buffer` is then zeroed.
  /// - Complexity: O(buffer + associated data).
  static func openInPlace(
    _ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
    associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    key: UnsafeRawBufferPointer
  ) -> Bool {
    guard tag.count == Sodium.tagLength else {
      Sodium.zero(buffer)
      return false
    }
    let opened = run(encrypting: false, key: key, nonce: nonce) { context in
      guard feed(context, associatedData: associatedData),
        crypt(context, UnsafeRawBufferPointer(buffer), into: buffer),
        EVP_CIPHER_CTX_ctrl(
          context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count),
          UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1
      else { return false }
      var last: Int32 = 0
      var spare: UInt8 = 0
      return EVP_DecryptFinal_ex(context, &spare, &last) == 1
    }
    if !opened { Sodium.zero(buffer) }
    return opened
  }

  /// Runs `body` with a fresh context set up for `key` and `nonce`, and frees the context.
  private static func run(
    encrypting: Bool, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    _ body: (OpaquePointer) -> Bool
  ) -> Bool {
    precondition(key.count == Sodium.keyLength && nonce.count == nonceLength)
    guard let cipher = chaCha20Poly1305, let context = EVP_CIPHER_CTX_new() else { return false }
    defer { EVP_CIPHER_CTX_free(context) }  // also clears the key schedule
    let k = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
    let iv = nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)
    let ready =
      encrypting
      ? EVP_EncryptInit_ex2(context, cipher, k, iv, nil)
      : EVP_DecryptInit_ex2(context, cipher, k, iv, nil)
    return ready == 1 && body(context)
  }

  /// Passes the associated data (an `Update` call with no output).
  private static func feed(_ context: OpaquePointer, associatedData: UnsafeRawBufferPointer)
    -> Bool
  {
    guard let base = associatedData.baseAddress, associatedData.count > 0 else { return true }
    var written: Int32 = 0
    return EVP_CipherUpdate(
      context, nil, &written, base.assumingMemoryBound(to: UInt8.self),
      Int32(associatedData.count)) == 1
  }

  /// Encrypts or decrypts (as the context was set up) `input` into `output`, in pieces.
  private static func crypt(
    _ context: OpaquePointer, _ input: UnsafeRawBufferPointer,
    into output: UnsafeMutableRawBufferPointer
  ) -> Bool {
    var start = 0
    while start < input.count {
      let length = Swift.min(pieceLength, input.count - start)
      var written: Int32 = 0
      guard
        EVP_CipherUpdate(
          context, (output.baseAddress! + start).assumingMemoryBound(to: UInt8.self),
          &written, (input.baseAddress! + start).assumingMemoryBound(to: UInt8.self),
          Int32(length)) == 1, Int(written) == length
      else { return false }
      start += length
    }
    return true
  }
}
