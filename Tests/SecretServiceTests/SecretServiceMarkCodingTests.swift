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
      // Version 2 (trusted time) is read; 9 is another version.
      let body = Array("offline-ttl-mark 9\ngeneration 1\n".utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      let bytes = body + Array("crc32 \(crc)\n".utf8)
      do {
        _ = try SecretServiceMarkCoding.decode(bytes)
        Issue.record("decoded a version-9 record")
      } catch {
        #expect(error.unreadableReason == .unknownVersion)
      }
    }

    static let tpm = TPMClockReading(
      identity: TPMIdentity(0x0102_0304_0506_0708, 0, .max, 0xA0B0_C0D0_E0F0_0001),
      clockMilliseconds: 500_123, resetCount: 4, restartCount: 2, isSafe: false)

    /// Trusted time (a server anchor with its boot and TPM readings, the last readings) is
    /// kept exactly, in format version 2; without it the secret stays version 1.
    @Test(arguments: [true, false])
    func trustedTimeRoundTripsAsVersion2(anchored: Bool) throws {
      let boot = BootClockReading(
        bootID: BootID(uuidString: "6f1c2a3b-0000-4000-8000-00000000beef")!,
        sinceBoot: .nanoseconds(5_000_000_123))
      let anchor =
        anchored
        ? try TrustedTimeAnchor(
          serverTime: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_002_000_000_000),
          uncertainty: .milliseconds(250), boot: boot, tpm: Self.tpm) : nil
      var record = Self.record
      record.trustedTime = TrustedTime(
        anchor: anchor, lowerBound: WallClockInstant(nanosecondsSinceEpoch: -7),
        elapsedSinceAnchor: .nanoseconds(Int64.max), lastBoot: anchored ? boot : nil,
        lastTPM: Self.tpm)
      let bytes = SecretServiceMarkCoding.encode(record)
      #expect(try SecretServiceMarkCoding.decode(bytes) == record)
      #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("offline-ttl-mark 2\n"))
      #expect(bytes.count <= SecretServiceMarkCoding.largestValue)
      #expect(
        String(decoding: SecretServiceMarkCoding.encode(Self.record), as: UTF8.self).hasPrefix(
          "offline-ttl-mark 1\n"))
    }

    /// The largest version-2 and version-3 secrets (every number at its longest) stay under the
    /// size limit.
    @Test func theLargestTrustedRecordFits() throws {
      let boot = BootClockReading(
        bootID: BootID(high: .max, low: .max), sinceBoot: .nanoseconds(Int64.min))
      let tpm = TPMClockReading(
        identity: TPMIdentity(.max, .max, .max, .max), clockMilliseconds: .max, resetCount: .max,
        restartCount: .max, isSafe: true)
      let instant = WallClockInstant(nanosecondsSinceEpoch: .min)
      let record = ClockMarkRecord(
        generation: .max, mark: instant,
        floor: BootClockFloor(
          lowerBound: instant, anchorBootID: BootID(high: .max, low: .max),
          anchorSinceBoot: .nanoseconds(Int64.min), elapsedSinceSignIn: .nanoseconds(Int64.min),
          isUntrusted: true),
        trustedTime: TrustedTime(
          anchor: try TrustedTimeAnchor(
            serverTime: instant, uncertainty: .nanoseconds(Int64.max), boot: boot, tpm: tpm),
          lowerBound: instant, elapsedSinceAnchor: .nanoseconds(Int64.min), lastBoot: boot,
          lastTPM: tpm))
      var bound = record
      bound.machine = MachineID(high: .max, low: .max)
      for record in [record, bound] {
        let bytes = SecretServiceMarkCoding.encode(record)
        #expect(bytes.count <= SecretServiceMarkCoding.largestValue, "\(bytes.count) bytes")
        #expect(try SecretServiceMarkCoding.decode(bytes) == record)
      }
    }

    /// A version-2 secret whose trusted-time fields do not parse is malformed (every field).
    @Test(arguments: 0..<7)
    func aBadTrustedFieldIsMalformed(field: Int) throws {
      var record = Self.record
      record.trustedTime = TrustedTime(
        anchor: try TrustedTimeAnchor(
          serverTime: WallClockInstant(nanosecondsSinceEpoch: 1), uncertainty: .zero,
          boot: nil, tpm: nil),
        lowerBound: WallClockInstant(nanosecondsSinceEpoch: 1), elapsedSinceAnchor: .zero,
        lastBoot: nil, lastTPM: Self.tpm)
      var lines = String(decoding: SecretServiceMarkCoding.encode(record), as: UTF8.self)
        .split(separator: "\n").dropLast().map(String.init)
      let index = 8 + field
      let name = lines[index].split(separator: " ")[0]
      lines[index] = String(name) + " x" + (field == 2 ? " -1" : "")
      let body = Array((lines.joined(separator: "\n") + "\n").utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      do {
        _ = try SecretServiceMarkCoding.decode(body + Array("crc32 \(crc)\n".utf8))
        Issue.record("decoded a bad \(name)")
      } catch {
        #expect(error.unreadableReason == .malformed)
      }
    }

    static let machine = MachineID(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210)

    /// A record bound to a machine is format version 3 (the machine line, then trusted time
    /// when the record has it) and reads back exactly; the same record unbound is still written
    /// as version 1 or 2, and those read back unbound.
    @Test(arguments: [false, true])
    func aBoundRecordRoundTripsAsVersion3(trusted: Bool) throws {
      var record = Self.record
      if trusted {
        record.trustedTime = TrustedTime(
          anchor: nil, lowerBound: WallClockInstant(nanosecondsSinceEpoch: 5),
          elapsedSinceAnchor: .nanoseconds(6), lastBoot: nil, lastTPM: Self.tpm)
      }
      record.machine = Self.machine
      let bytes = SecretServiceMarkCoding.encode(record)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("offline-ttl-mark 3\n"))
      #expect(text.contains("\nuntrusted 1\nmachine 0123456789abcdeffedcba9876543210\n"))
      #expect(text.split(separator: "\n").count == (trusted ? 17 : 10))
      #expect(try SecretServiceMarkCoding.decode(bytes) == record)
      record.machine = nil
      let earlier = SecretServiceMarkCoding.encode(record)
      #expect(
        String(decoding: earlier, as: UTF8.self).hasPrefix("offline-ttl-mark \(trusted ? 2 : 1)\n"))
      #expect(try SecretServiceMarkCoding.decode(earlier) == record)
    }

    /// A version-1 secret as stored before machine binding (literal bytes) reads as an unbound
    /// record.
    @Test func aSecretWrittenBeforeBindingReadsUnbound() throws {
      let body = Array(
        ("offline-ttl-mark 1\ngeneration 2\nmark 10\nfloor 9\n"
          + "anchor-boot 6f1c2a3b-0000-4000-8000-00000000beef\nanchor-since-boot 1\n"
          + "elapsed-since-sign-in 0\nuntrusted 0\n").utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      let record = try SecretServiceMarkCoding.decode(body + Array("crc32 \(crc)\n".utf8))
      #expect(record.generation == 2 && record.machine == nil)
    }

    /// A version-3 secret whose machine line is not an id (every other spelling), is missing,
    /// or is followed by a partial trusted-time block, is malformed even with a good checksum.
    @Test(arguments: [
      "machine 0123456789ABCDEF0123456789ABCDE", "machine 00000000000000000000000000000000",
      "machine none", "machine ", "machines 0123456789abcdef0123456789abcdef",
      "machine 0123456789abcdef0123456789abcdef\ntrusted-lower-bound 5",
      "",
    ])
    func aBadMachineLineIsMalformed(line: String) {
      var text =
        "offline-ttl-mark 3\ngeneration 2\nmark 10\nfloor 9\n"
        + "anchor-boot 6f1c2a3b-0000-4000-8000-00000000beef\nanchor-since-boot 1\n"
        + "elapsed-since-sign-in 0\nuntrusted 0\n"
      if !line.isEmpty { text += line + "\n" }
      let body = Array(text.utf8)
      let crc = SecretServiceMarkCoding.hex(SecretServiceMarkCoding.checksum(body))
      do {
        _ = try SecretServiceMarkCoding.decode(body + Array("crc32 \(crc)\n".utf8))
        Issue.record("decoded \(line.debugDescription)")
      } catch {
        #expect(error.unreadableReason == .malformed)
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
