import CSodium

/// The only file that calls libsodium: authenticated encryption (XChaCha20-Poly1305, IETF
/// construction; the sealed items use it through ``XChaCha20Poly1305``, which has libcrypto do
/// the bulk and keeps these functions as the same cipher's second engine), HChaCha20, keyed
/// BLAKE2b (`crypto_generichash`) as a MAC, `crypto_kdf` subkeys and `randombytes_buf`. No
/// cryptography of our own: every function here is one libsodium call with typed,
/// length-checked arguments.
///
/// `sodium_init()` runs once per process, on first use, through a `static let` (Swift runs a
/// global's initializer exactly once, thread-safely); libsodium's own `sodium_init` is also safe
/// to call from several threads.
enum Sodium {
  /// Bytes in a key for every primitive here (XChaCha20-Poly1305, the MAC, `crypto_kdf`): 32.
  static let keyLength = 32
  /// Bytes in an XChaCha20-Poly1305 nonce: 24, random (collisions are negligible at that size).
  static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
  /// Bytes the AEAD adds to a message (the Poly1305 tag): 16.
  static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
  /// Bytes in a MAC (BLAKE2b-256): 32.
  static let macLength = 32
  /// The `crypto_kdf` context of every subkey of a store key: 8 bytes.
  static let kdfContext: [CChar] = Array("OTLSeal1".utf8).map { CChar(bitPattern: $0) }

  /// Whether `sodium_init()` succeeded (0: initialized now; 1: already initialized).
  private static let initialized: Bool = sodium_init() >= 0

  /// Initializes libsodium on first use; traps only if libsodium cannot initialize at all (it
  /// then has no usable random source, and nothing can be sealed or opened safely).
  @inline(__always)
  static func ready() {
    precondition(initialized, "libsodium failed to initialize (sodium_init() < 0)")
  }

  /// `count` bytes from libsodium's CSPRNG (`randombytes_buf`: `getrandom(2)` on Linux).
  static func randomBytes(_ count: Int) -> [UInt8] {
    ready()
    var bytes = [UInt8](repeating: 0, count: count)
    guard count > 0 else { return [] }
    bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
    return bytes
  }

  /// `crypto_kdf_derive_from_key`: the 32-byte subkey number `id` of `key` in this library's
  /// context. Different ids (purposes) give independent keys.
  ///
  /// - Precondition: `key.count == keyLength`.
  static func deriveSubkey(_ key: [UInt8], id: UInt64) -> [UInt8] {
    ready()
    precondition(key.count == keyLength)
    var subkey = [UInt8](repeating: 0, count: keyLength)
    let status = subkey.withUnsafeMutableBufferPointer { out in
      key.withUnsafeBufferPointer { master in
        kdfContext.withUnsafeBufferPointer { context in
          crypto_kdf_derive_from_key(
            out.baseAddress!, keyLength, id, context.baseAddress!, master.baseAddress!)
        }
      }
    }
    precondition(status == 0, "crypto_kdf_derive_from_key failed")
    return subkey
  }

  /// `crypto_aead_xchacha20poly1305_ietf_encrypt`: `message` encrypted and authenticated
  /// together with `associatedData`, written to `output` (which must hold
  /// `message.count + tagLength` bytes): the ciphertext, then the tag.
  ///
  /// - Complexity: O(message + associated data).
  static func seal(
    _ message: UnsafeRawBufferPointer, associatedData: [UInt8], nonce: [UInt8], key: [UInt8],
    into output: UnsafeMutableRawBufferPointer
  ) {
    ready()
    precondition(nonce.count == nonceLength && key.count == keyLength)
    precondition(output.count == message.count + tagLength)
    var written: UInt64 = 0
    let status = associatedData.withUnsafeBufferPointer { ad in
      nonce.withUnsafeBufferPointer { npub in
        key.withUnsafeBufferPointer { k in
          crypto_aead_xchacha20poly1305_ietf_encrypt(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
            ad.baseAddress, UInt64(ad.count), nil, npub.baseAddress!, k.baseAddress!)
        }
      }
    }
    precondition(status == 0 && written == UInt64(output.count), "AEAD encryption failed")
  }

  /// `crypto_aead_xchacha20poly1305_ietf_decrypt`: checks the tag of `sealed` (ciphertext then
  /// tag) against `associatedData`, `nonce` and `key`, and decrypts into `output` (which must
  /// hold `sealed.count - tagLength` bytes).
  ///
  /// - Returns: `false` when the tag does not verify (any byte changed, another key, nonce or
  ///   associated data); `output` then holds nothing usable (libsodium leaves it unwritten or
  ///   zeroed).
  /// - Complexity: O(sealed + associated data).
  static func open(
    _ sealed: UnsafeRawBufferPointer, associatedData: [UInt8], nonce: [UInt8], key: [UInt8],
    into output: UnsafeMutableRawBufferPointer
  ) -> Bool {
    ready()
    precondition(nonce.count == nonceLength && key.count == keyLength)
    guard sealed.count >= tagLength, output.count == sealed.count - tagLength else { return false }
    var written: UInt64 = 0
    let status = associatedData.withUnsafeBufferPointer { ad in
      nonce.withUnsafeBufferPointer { npub in
        key.withUnsafeBufferPointer { k in
          crypto_aead_xchacha20poly1305_ietf_decrypt(
            output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
            sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
            ad.baseAddress, UInt64(ad.count), npub.baseAddress!, k.baseAddress!)
        }
      }
    }
    return status == 0 && written == UInt64(output.count)
  }

  /// ``openInPlace(_:tag:associatedData:nonce:key:)-(UnsafeMutableRawBufferPointer,UnsafeRawBufferPointer,_,_,_)``
  /// with its tag, associated data, nonce and key in arrays (the one-blob item format of
  /// version 2, and tests).
  ///
  /// - Returns: `false` when `tag` is not 16 bytes or does not verify; `buffer` is then zeroed.
  /// - Complexity: O(buffer + associated data).
  static func openInPlace(
    _ buffer: UnsafeMutableRawBufferPointer, tag: [UInt8], associatedData: [UInt8],
    nonce: [UInt8], key: [UInt8]
  ) -> Bool {
    tag.withUnsafeBytes { mac in
      associatedData.withUnsafeBytes { ad in
        nonce.withUnsafeBytes { npub in
          key.withUnsafeBytes { k in
            openInPlace(buffer, tag: mac, associatedData: ad, nonce: npub, key: k)
          }
        }
      }
    }
  }

  /// `crypto_core_hchacha20`: the 32-byte HChaCha20 output of `key` (32 bytes) and `input` (16
  /// bytes) into `output` (32 bytes), with ChaCha20's standard constants: the subkey step of
  /// XChaCha20 (``XChaCha20Poly1305``).
  static func hChaCha20(
    _ key: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer,
    into output: UnsafeMutableRawBufferPointer
  ) {
    ready()
    precondition(key.count == keyLength && input.count == 16 && output.count == keyLength)
    let status = crypto_core_hchacha20(
      output.baseAddress!.assumingMemoryBound(to: UInt8.self),
      input.baseAddress!.assumingMemoryBound(to: UInt8.self),
      key.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
    precondition(status == 0, "crypto_core_hchacha20 failed")
  }

  /// `crypto_aead_xchacha20poly1305_ietf_encrypt_detached`: `message` encrypted into `output`
  /// (the same size) and its 16-byte tag into `tag`, authenticated together with
  /// `associatedData`. `output` may be `message`'s own memory.
  ///
  /// - Complexity: O(message + associated data).
  static func sealDetached(
    _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
    tag: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
  ) {
    ready()
    precondition(nonce.count == nonceLength && key.count == keyLength)
    precondition(output.count == message.count && tag.count == tagLength)
    var empty: UInt8 = 0
    let status = withUnsafeMutablePointer(to: &empty) { placeholder in
      crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
        output.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? placeholder,
        tag.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
        message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(placeholder),
        UInt64(message.count), associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
        UInt64(associatedData.count), nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
        key.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
    precondition(status == 0, "AEAD encryption failed")
  }

  /// `crypto_aead_xchacha20poly1305_ietf_decrypt_detached` with the output at the input's
  /// address: `buffer` holds the ciphertext, `tag` the 16-byte tag that followed it, and on
  /// success `buffer` holds the plaintext. libsodium verifies the tag over the ciphertext before
  /// it decrypts anything, then runs the stream cipher with the output at the input's own
  /// address, which its stream functions allow (`aead_chacha20poly1305.c`; `SodiumTests` checks
  /// it against the two-buffer form at sizes around the vectorized block sizes).
  ///
  /// - Returns: `false` when `tag` is not 16 bytes or does not verify; `buffer` is then zeroed.
  /// - Complexity: O(buffer + associated data).
  static func openInPlace(
    _ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
    associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
    key: UnsafeRawBufferPointer
  ) -> Bool {
    ready()
    precondition(nonce.count == nonceLength && key.count == keyLength)
    guard tag.count == tagLength else {
      zero(buffer)
      return false
    }
    // libsodium wants a non-null ciphertext pointer even for an empty message.
    var empty: UInt8 = 0
    let status = withUnsafeMutablePointer(to: &empty) { placeholder in
      let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? placeholder
      return crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
        base, nil, base, UInt64(buffer.count), tag.baseAddress!.assumingMemoryBound(to: UInt8.self),
        associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
        UInt64(associatedData.count), nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
        key.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
    return status == 0
  }

  /// Overwrites `buffer` with zeros in a way the compiler keeps (`sodium_memzero`).
  static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(base, buffer.count)
  }

  /// Keyed BLAKE2b (`crypto_generichash` with a key) over the concatenation of `parts`.
  ///
  /// - Parameters:
  ///   - parts: The message, in pieces (hashed as if concatenated).
  ///   - key: 16 to 64 bytes (32 for every key this library derives).
  ///   - length: The output length, 16 to 64 bytes; default 32.
  /// - Complexity: O(total length).
  static func mac(_ parts: [UnsafeRawBufferPointer], key: [UInt8], length: Int = macLength)
    -> [UInt8]
  {
    ready()
    precondition((16...64).contains(key.count) && (16...64).contains(length))
    let state = UnsafeMutableRawPointer.allocate(
      byteCount: crypto_generichash_statebytes(), alignment: 64)
    defer {
      sodium_memzero(state, crypto_generichash_statebytes())
      state.deallocate()
    }
    // The state type is 64-byte aligned in C and reaches Swift as an opaque pointer.
    let typed = OpaquePointer(state)
    var out = [UInt8](repeating: 0, count: length)
    key.withUnsafeBufferPointer { k in
      _ = crypto_generichash_init(typed, k.baseAddress, k.count, length)
    }
    for part in parts where part.count > 0 {
      _ = crypto_generichash_update(
        typed, part.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
    }
    out.withUnsafeMutableBufferPointer {
      _ = crypto_generichash_final(typed, $0.baseAddress!, length)
    }
    return out
  }

  /// ``mac(_:key:length:)`` over byte arrays.
  static func mac(_ parts: [[UInt8]], key: [UInt8], length: Int = macLength) -> [UInt8] {
    func go(_ index: Int, _ buffers: [UnsafeRawBufferPointer]) -> [UInt8] {
      if index == parts.count { return mac(buffers, key: key, length: length) }
      return parts[index].withUnsafeBytes { go(index + 1, buffers + [$0]) }
    }
    return go(0, [])
  }

  /// Compares two MACs in constant time (`sodium_memcmp`); `false` when the lengths differ.
  static func equalInConstantTime(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>)
    -> Bool
  {
    // Contiguous storage (arrays and their slices) is compared in place: no copy, no heap
    // allocation on a check's path.
    let direct = lhs.withContiguousStorageIfAvailable { left in
      rhs.withContiguousStorageIfAvailable { right in
        equalInConstantTime(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
      }
    }
    if let direct, let direct { return direct }
    let left = Array(lhs)
    let right = Array(rhs)
    return left.withUnsafeBytes { l in right.withUnsafeBytes { r in equalInConstantTime(l, r) } }
  }

  private static func equalInConstantTime(
    _ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer
  ) -> Bool {
    guard left.count == right.count else { return false }
    // The same storage holds the same bytes: a repeated check compares the subkeys it derived
    // once with themselves (where they are the same array). Which storage two buffers use says
    // nothing about their contents.
    guard !left.isEmpty, left.baseAddress != right.baseAddress else { return true }
    return sodium_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
  }
}
