import Foundation
import Testing

@testable import OfflineTTL

/// The item cipher as composed here (libsodium's HChaCha20, then libcrypto's ChaCha20-Poly1305)
/// against the published vector and against libsodium's own XChaCha20-Poly1305, byte for byte,
/// and its refusals: a store sealed by either engine must open with the other.
@Suite struct XChaCha20Poly1305Tests {
  typealias Engine = XChaCha20Poly1305.Engine

  /// Sealed bytes (ciphertext, then tag) of `message` by `engine`.
  static func seal(
    _ message: [UInt8], ad: [UInt8], nonce: [UInt8], key: [UInt8], engine: Engine
  ) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: message.count)
    var tag = [UInt8](repeating: 0, count: Sodium.tagLength)
    message.withUnsafeBytes { m in
      output.withUnsafeMutableBytes { o in
        tag.withUnsafeMutableBytes { t in
          ad.withUnsafeBytes { a in
            nonce.withUnsafeBytes { n in
              key.withUnsafeBytes { k in
                XChaCha20Poly1305.sealDetached(
                  m, into: o, tag: t, associatedData: a, nonce: n, key: k, engine: engine)
              }
            }
          }
        }
      }
    }
    return output + tag
  }

  /// The plaintext of `sealed` opened in place by `engine`, or `nil` with the buffer's bytes
  /// after the refusal.
  static func open(
    _ sealed: [UInt8], ad: [UInt8], nonce: [UInt8], key: [UInt8], engine: Engine
  ) -> (plaintext: [UInt8]?, buffer: [UInt8]) {
    let split = Swift.max(0, sealed.count - Sodium.tagLength)
    var buffer = Array(sealed[..<split])
    let tag = Array(sealed[split...])
    let ok = buffer.withUnsafeMutableBytes { b in
      tag.withUnsafeBytes { t in
        ad.withUnsafeBytes { a in
          nonce.withUnsafeBytes { n in
            key.withUnsafeBytes { k in
              XChaCha20Poly1305.openInPlace(
                b, tag: t, associatedData: a, nonce: n, key: k, engine: engine)
            }
          }
        }
      }
    }
    return (ok ? buffer : nil, buffer)
  }

  @Test func libcryptoDoesTheBulkInThisProcess() {
    // libcrypto is linked and its default provider has ChaCha20-Poly1305: the fast engine runs.
    #expect(LibCrypto.chaCha20Poly1305 != nil)
    #expect(XChaCha20Poly1305.engine == .libcrypto)
  }

  @Test(arguments: Engine.allCases)
  func eachEngineMatchesThePublishedVector(_ engine: Engine) {
    let sealed = Self.seal(
      SodiumTests.vectorMessage, ad: SodiumTests.vectorAD, nonce: SodiumTests.vectorNonce,
      key: SodiumTests.vectorKey, engine: engine)
    #expect(SodiumTests.hex(sealed) == SodiumTests.hex(SodiumTests.vectorSealed))
    let opened = Self.open(
      SodiumTests.vectorSealed, ad: SodiumTests.vectorAD, nonce: SodiumTests.vectorNonce,
      key: SodiumTests.vectorKey, engine: engine)
    #expect(opened.plaintext == SodiumTests.vectorMessage)
  }

  /// Sizes around ChaCha20's 64-byte block, the vectorized 256- and 512-byte strides, Poly1305's
  /// 16-byte block, an item chunk (64 KiB) and 1 MiB; associated data of several lengths.
  @Test(arguments: [
    0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 511, 512, 513, 4103, 65_535, 65_536, 65_537,
    1 << 20,
  ])
  func theEnginesWriteAndReadTheSameBytes(_ size: Int) {
    var random = SystemRandomNumberGenerator()
    let message = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
    for adLength in [0, 1, 12, 64, 200] {
      let ad = Sodium.randomBytes(adLength)
      let nonce = Sodium.randomBytes(Sodium.nonceLength)
      let key = Sodium.randomBytes(Sodium.keyLength)
      let byLibcrypto = Self.seal(message, ad: ad, nonce: nonce, key: key, engine: .libcrypto)
      let byLibsodium = Self.seal(message, ad: ad, nonce: nonce, key: key, engine: .libsodium)
      // libsodium's one-call form as a third witness.
      #expect(byLibcrypto == SodiumTests.seal(message, ad: ad, nonce: nonce, key: key))
      #expect(byLibcrypto == byLibsodium, "size \(size), associated data \(adLength)")
      #expect(
        Self.open(byLibsodium, ad: ad, nonce: nonce, key: key, engine: .libcrypto).plaintext
          == message)
      #expect(
        Self.open(byLibcrypto, ad: ad, nonce: nonce, key: key, engine: .libsodium).plaintext
          == message)
    }
  }

  /// Every refusal leaves the buffer zeroed: libcrypto decrypts before it checks the tag, so
  /// this is what keeps unauthenticated plaintext out of the caller's hands.
  @Test(arguments: Engine.allCases)
  func everyChangeIsRefusedAndLeavesNoPlaintext(_ engine: Engine) {
    let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
    let ad = Array("store id and key".utf8)
    let nonce = Sodium.randomBytes(Sodium.nonceLength)
    let key = Sodium.randomBytes(Sodium.keyLength)
    let sealed = Self.seal(message, ad: ad, nonce: nonce, key: key, engine: engine)
    func refused(
      _ bytes: [UInt8], ad: [UInt8] = ad, nonce: [UInt8] = nonce, key: [UInt8] = key,
      _ what: String
    ) {
      let result = Self.open(bytes, ad: ad, nonce: nonce, key: key, engine: engine)
      #expect(result.plaintext == nil, "\(what) was accepted")
      #expect(result.buffer.allSatisfy { $0 == 0 }, "\(what): the buffer keeps bytes")
    }
    for index in [0, 1, 63, 64, 500, 999, 1000, 1007, 1015] {
      var altered = sealed
      altered[index] ^= 0x20
      refused(altered, "byte \(index) flipped")
    }
    var otherKey = key
    otherKey[17] ^= 1
    refused(sealed, key: otherKey, "another key")
    // The nonce's first 16 bytes go to HChaCha20, its last 8 to the IETF nonce: both matter.
    for index in [0, 15, 16, 23] {
      var otherNonce = nonce
      otherNonce[index] ^= 1
      refused(sealed, nonce: otherNonce, "nonce byte \(index) changed")
    }
    refused(sealed, ad: ad + [0], "associated data lengthened")
    refused(sealed, ad: [], "associated data dropped")
    refused(Array(sealed.dropLast()), "the tag shortened")
  }

  @Test(arguments: Engine.allCases)
  func aSealInPlaceGivesTheSameBytesAsOneIntoAnotherBuffer(_ engine: Engine) {
    let message = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let nonce = Sodium.randomBytes(Sodium.nonceLength)
    let key = Sodium.randomBytes(Sodium.keyLength)
    let expected = Self.seal(message, ad: [9], nonce: nonce, key: key, engine: engine)
    var buffer = message
    var tag = [UInt8](repeating: 0, count: Sodium.tagLength)
    buffer.withUnsafeMutableBytes { b in
      tag.withUnsafeMutableBytes { t in
        [UInt8(9)].withUnsafeBytes { a in
          nonce.withUnsafeBytes { n in
            key.withUnsafeBytes { k in
              XChaCha20Poly1305.sealDetached(
                UnsafeRawBufferPointer(b), into: b, tag: t, associatedData: a, nonce: n, key: k,
                engine: engine)
            }
          }
        }
      }
    }
    #expect(buffer + tag == expected)
  }
}
