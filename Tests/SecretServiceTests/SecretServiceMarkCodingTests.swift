#if SecretService
  import OfflineTTL
  import Testing

  @testable import OfflineTTLSecretService

  @Suite struct SecretServiceMarkCodingTests {
    static let record = ClockMarkRecord(
      generation: 7, mark: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_123_456_789),
      floor: BootClockFloor(
        lowerBound: WallClockInstant(nanosecondsSinceEpoch: 1_699_999_000_000_000_001),
        anchorBootID: BootID(uuidString: "6f1c2a3b-0000-4000-8000-00000000beef")!,
        anchorSinceBoot: .nanoseconds(5_000_000_123), elapsedSinceSignIn: .nanoseconds(42),
        isUntrusted: true))

    @Test func roundTripKeepsEveryFieldExactly() throws {
      let bytes = SecretServiceMarkCoding.encode(Self.record)
      #expect(try SecretServiceMarkCoding.decode(bytes) == Self.record)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("offline-ttl-mark 1\ngeneration 7\nmark 1700000000123456789\n"))
    }

    @Test func extremeInstantsRoundTrip() throws {
      for nanoseconds in [Int64.min, -1, 0, Int64.max] {
        let instant = WallClockInstant(nanosecondsSinceEpoch: nanoseconds)
        let record = ClockMarkRecord(
          generation: .max, mark: instant, floor: .signIn(at: instant, boot: nil))
        #expect(
          try SecretServiceMarkCoding.decode(SecretServiceMarkCoding.encode(record)) == record)
      }
    }

    @Test(arguments: [
      ([], ClockMarkStoreError.UnreadableReason.empty),
      (Array("no newline at all".utf8), .malformed),
      ([0xFF, 0xFE, 0x0A], .malformed),
    ])
    func garbageIsUnreadable(bytes: [UInt8], why: ClockMarkStoreError.UnreadableReason) {
      #expect {
        try SecretServiceMarkCoding.decode(bytes)
      } throws: { error in
        let error = error as? ClockMarkStoreError
        return error?.code == .unreadable && error?.unreadableReason == why
      }
    }

    @Test func aSecretLargerThanAnyRecordIsOversized() {
      do {
        _ = try SecretServiceMarkCoding.decode(Array(repeating: UInt8(ascii: "a"), count: 1025))
        Issue.record("decoded 1025 bytes")
      } catch {
        #expect(error.unreadableReason == .oversized)
      }
    }

    @Test func aFlippedDigitFailsTheChecksum() {
      var bytes = SecretServiceMarkCoding.encode(Self.record)
      let index = bytes.firstIndex(of: UInt8(ascii: "9"))!
      bytes[index] = UInt8(ascii: "8")
      #expect(throws: ClockMarkStoreError.self) { try SecretServiceMarkCoding.decode(bytes) }
      do {
        _ = try SecretServiceMarkCoding.decode(bytes)
      } catch {
        #expect(error.unreadableReason == .badChecksum)
      }
    }

    @Test func anotherVersionIsUnknownVersion() {
      let body = Array("offline-ttl-mark 2\ngeneration 1\n".utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      let bytes = body + Array("crc32 \(crc)\n".utf8)
      do {
        _ = try SecretServiceMarkCoding.decode(bytes)
        Issue.record("decoded a version-2 record")
      } catch {
        #expect(error.unreadableReason == .unknownVersion)
      }
    }

    @Test func aMissingFieldIsMalformedEvenWithAGoodChecksum() {
      let body = Array("offline-ttl-mark 1\ngeneration 1\nmark 5\n".utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      do {
        _ = try SecretServiceMarkCoding.decode(body + Array("crc32 \(crc)\n".utf8))
        Issue.record("decoded a record without a floor")
      } catch {
        #expect(error.unreadableReason == .malformed)
      }
    }
  }
#endif
