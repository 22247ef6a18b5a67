import Foundation
import Testing

@testable import OfflineTTL

/// The libsodium layer against published known answers and its failure behaviour.
@Suite struct SodiumTests {
  static func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map {
      UInt8(String(digits[$0...$0 + 1]), radix: 16)!
    }
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
  }

  static func seal(_ message: [UInt8], ad: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: message.count + Sodium.tagLength)
    message.withUnsafeBytes { m in
      out.withUnsafeMutableBytes { o in
        Sodium.seal(m, associatedData: ad, nonce: nonce, key: key, into: o)
      }
    }
    return out
  }

  static func open(_ sealed: [UInt8], ad: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: max(sealed.count - Sodium.tagLength, 0))
    let ok = sealed.withUnsafeBytes { s in
      out.withUnsafeMutableBytes { o in
        Sodium.open(s, associatedData: ad, nonce: nonce, key: key, into: o)
      }
    }
    return ok ? out : nil
  }

  // draft-irtf-cfrg-xchacha-03, appendix A.3.1 (AEAD_XChaCha20_Poly1305).
  static let vectorKey = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
  static let vectorNonce = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
  static let vectorAD = hex("50515253c0c1c2c3c4c5c6c7")
  static let vectorMessage = Array(
    ("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      + "future, sunscreen would be it.").utf8)
  static let vectorSealed = hex(
    """
    bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39
    ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
    21f9664c97637da9768812f615c68b13b52e c0875924c1c7987947deafd8780acf49
    """)

  @Test func xchachaPoly1305MatchesThePublishedVector() {
    let sealed = Self.seal(
      Self.vectorMessage, ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey)
    #expect(Self.hex(sealed) == Self.hex(Self.vectorSealed))
    let opened = Self.open(sealed, ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey)
    #expect(opened == Self.vectorMessage)
  }

  /// The in-place open (output at the input's address) gives exactly the two-buffer open's
  /// plaintext at sizes around the stream cipher's vectorized block sizes, and refuses a flipped
  /// byte, a short buffer and another key as the two-buffer open does.
  @Test(arguments: [0, 1, 15, 16, 63, 64, 65, 255, 256, 257, 511, 512, 513, 4103, 1 << 20])
  func theInPlaceOpenMatchesTheTwoBufferOpen(_ size: Int) {
    let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let sealed = Self.seal(
      message, ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey)
    func inPlace(_ bytes: [UInt8], key: [UInt8] = Self.vectorKey) -> [UInt8]? {
      let split = Swift.max(0, bytes.count - Sodium.tagLength)
      var buffer = Array(bytes[..<split])
      let ok = buffer.withUnsafeMutableBytes {
        Sodium.openInPlace(
          $0, tag: Array(bytes[split...]), associatedData: Self.vectorAD,
          nonce: Self.vectorNonce, key: key)
      }
      return ok ? buffer : nil
    }
    #expect(inPlace(sealed) == message)
    #expect(
      Self.open(sealed, ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey)
        == message)
    for index in [0, sealed.count / 2, sealed.count - 1] {
      var altered = sealed
      altered[index] ^= 0x40
      #expect(inPlace(altered) == nil, "byte \(index) of \(sealed.count)")
    }
    var other = Self.vectorKey
    other[0] ^= 1
    #expect(inPlace(sealed, key: other) == nil)
    #expect(inPlace(Array(sealed.prefix(Sodium.tagLength - 1))) == nil)
  }

  @Test func everyFlippedByteOfASealIsRefused() {
    let sealed = Self.vectorSealed
    for index in sealed.indices {
      var altered = sealed
      altered[index] ^= 0x01
      #expect(
        Self.open(altered, ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey) == nil,
        "byte \(index)")
    }
    #expect(
      Self.open(
        Array(sealed.dropLast()), ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey)
        == nil)
    #expect(Self.open([], ad: Self.vectorAD, nonce: Self.vectorNonce, key: Self.vectorKey) == nil)
  }

  @Test func wrongKeyNonceOrAssociatedDataIsRefused() {
    var key = Self.vectorKey
    key[31] ^= 0x80
    var nonce = Self.vectorNonce
    nonce[0] ^= 1
    var ad = Self.vectorAD
    ad[11] ^= 1
    let sealed = Self.vectorSealed
    #expect(Self.open(sealed, ad: Self.vectorAD, nonce: Self.vectorNonce, key: key) == nil)
    #expect(Self.open(sealed, ad: Self.vectorAD, nonce: nonce, key: Self.vectorKey) == nil)
    #expect(Self.open(sealed, ad: ad, nonce: Self.vectorNonce, key: Self.vectorKey) == nil)
    #expect(Self.open(sealed, ad: [], nonce: Self.vectorNonce, key: Self.vectorKey) == nil)
  }

  @Test(arguments: [0, 1, 15, 16, 17, 4096, 1 << 20])
  func roundTripsAnyLength(_ length: Int) {
    let key = Sodium.randomBytes(32)
    let nonce = Sodium.randomBytes(Sodium.nonceLength)
    let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let sealed = Self.seal(message, ad: [1, 2, 3], nonce: nonce, key: key)
    #expect(sealed.count == length + 16)
    #expect(Self.open(sealed, ad: [1, 2, 3], nonce: nonce, key: key) == message)
    if length > 0 {
      // The ciphertext does not contain the plain text.
      #expect(Array(sealed.prefix(length)) != message)
    }
  }

  @Test func keyedBlake2bMatchesTheReferenceKnownAnswers() {
    // blake2b-kat.txt (the BLAKE2 reference), keyed entry 0: key 00..3f, empty input, 64 bytes.
    let key64 = (0..<64).map { UInt8($0) }
    #expect(
      Self.hex(Sodium.mac([[UInt8]](), key: key64, length: 64))
        == "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
        + "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568")
    // BLAKE2b-256 keyed with 00..1f over "abc" (Python hashlib.blake2b gives the same).
    let key32 = (0..<32).map { UInt8($0) }
    #expect(
      Self.hex(Sodium.mac([Array("abc".utf8)], key: key32))
        == "d63a32d3e44738d7907f964316c241adaba0abfeabc32349677578a15a203f7f")
    // Parts hash as their concatenation.
    #expect(
      Sodium.mac([Array("a".utf8), [], Array("bc".utf8)], key: key32)
        == Sodium.mac([Array("abc".utf8)], key: key32))
  }

  @Test func kdfSubkeysAreBlake2bWithTheIdAsSaltAndTheContextAsPersonalization() {
    // crypto_kdf in libsodium 1.0.18 is BLAKE2b(key, salt = id LE || 0^8,
    // personal = context || 0^8); the expected values come from Python's hashlib.
    let key = (0..<32).map { UInt8($0) }
    #expect(
      Self.hex(Sodium.deriveSubkey(key, id: 1))
        == "6f14b753e9dc9b7bf5fb4d0ffbb06f426636826ba4129e8e5b5cec18de272303")
    #expect(
      Self.hex(Sodium.deriveSubkey(key, id: 2))
        == "cee109d2adb9af0cbaad6b5028bcb89b51fad96b7235557e9145ca00b87a101e")
  }

  @Test func subkeysOfOneStoreKeyAreDistinctAndStable() throws {
    let key = SealingKey.random()
    let keys = SealKeys(key)
    let again = SealKeys(key)
    #expect(Set([keys.items, keys.index, keys.mark]).count == 3)
    #expect(keys.items == again.items && keys.check == again.check)
    #expect(keys.check.count == 8)
    #expect(SealKeys(SealingKey.random()).check != keys.check)
    #expect(!key.description.contains(Self.hex(key.bytes)))
  }

  @Test func subkeySetsAreTheSameByReferenceOrByValueOnly() throws {
    let key = SealingKey.random()
    let keys = SealKeys(key)
    #expect(keys.isSame(as: keys))
    #expect(keys.isSame(as: SealKeys(key)), "derived apart from one key")
    #expect(!keys.isSame(as: SealKeys(SealingKey.random())))
    #expect(SealKeys.of(key) === SealKeys.of(key), "the last key derived is not derived again")
  }

  @Test func randomBytesDiffer() {
    #expect(Sodium.randomBytes(24) != Sodium.randomBytes(24))
    #expect(Sodium.randomBytes(0).isEmpty)
  }

  @Test func constantTimeComparison() {
    #expect(Sodium.equalInConstantTime([1, 2, 3], [1, 2, 3]))
    #expect(!Sodium.equalInConstantTime([1, 2, 3], [1, 2, 4]))
    #expect(!Sodium.equalInConstantTime([1, 2, 3], [1, 2]))
    // One array with itself (the same storage), and slices of one array at different places.
    let key: [UInt8] = Array(0..<32)
    #expect(Sodium.equalInConstantTime(key, key))
    #expect(Sodium.equalInConstantTime(key[0..<16], key[0..<16]))
    #expect(!Sodium.equalInConstantTime(key[0..<16], key[16..<32]))
    #expect(!Sodium.equalInConstantTime(key[0..<16], key[1..<17]))
  }

  @Test func initializesOnceFromManyThreads() async {
    await withTaskGroup(of: Int.self) { group in
      for _ in 0..<16 { group.addTask { Sodium.randomBytes(8).count } }
      for await count in group { #expect(count == 8) }
    }
  }

  @Test func aKeyOfTheWrongSizeIsTyped() {
    for size in [0, 31, 33] {
      #expect {
        try SealingKey(bytes: [UInt8](repeating: 1, count: size))
      } throws: { ($0 as? SealingKeyError)?.code == .wrongSize }
    }
  }
}
