import Testing

@testable import OfflineTTL

@Suite struct MarkRecordCodecTrustedTimeTests {
  static let identity = TPMIdentity(0x0102_0304_0506_0708, 9, .max, 0)
  static let floor = BootClockFloor(
    lowerBound: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000),
    anchorBootID: BootID(high: 1, low: 2), anchorSinceBoot: .seconds(5),
    elapsedSinceSignIn: .seconds(3), isUntrusted: false)

  static func tpm(_ clock: UInt64, safe: Bool) -> TPMClockReading {
    TPMClockReading(
      identity: identity, clockMilliseconds: clock, resetCount: 3, restartCount: 1, isSafe: safe)
  }

  static let records: [ClockMarkRecord] = {
    let boot = BootClockReading(bootID: BootID(high: 5, low: 6), sinceBoot: .seconds(77))
    let anchor = try! TrustedTimeAnchor(
      serverTime: WallClockInstant(nanosecondsSinceEpoch: -5), uncertainty: .milliseconds(250),
      boot: boot, tpm: tpm(1_000, safe: true))
    let anchorNoClocks = try! TrustedTimeAnchor(
      serverTime: .max, uncertainty: .zero, boot: nil, tpm: nil)
    let variants: [TrustedTime] = [
      TrustedTime(
        anchor: anchor, lowerBound: .min, elapsedSinceAnchor: .seconds(9), lastBoot: boot,
        lastTPM: tpm(5_000, safe: false)),
      TrustedTime(
        anchor: nil, lowerBound: .max, elapsedSinceAnchor: .zero, lastBoot: nil,
        lastTPM: tpm(.max, safe: true)),
      TrustedTime(
        anchor: anchorNoClocks, lowerBound: .max, elapsedSinceAnchor: .zero, lastBoot: nil,
        lastTPM: nil),
    ]
    return variants.map {
      ClockMarkRecord(
        generation: 4, mark: WallClockInstant(nanosecondsSinceEpoch: 42), floor: floor,
        trustedTime: $0)
    }
  }()

  @Test(arguments: records)
  func versionTwoRoundTrips(record: ClockMarkRecord) {
    let slot = MarkRecordCodec.encode(record, sequence: 9)
    #expect(slot.count == 256)
    #expect(slot[4] == 2)
    #expect(MarkRecordCodec.decode(slot[...]) == .valid(sequence: 9, record: record))
    let file = MarkRecordCodec.encodeFile(record, sequence: 1)
    #expect(file.count == MarkRecordCodec.fileSize)
    #expect(MarkRecordCodec.decode(file[4096..<8192]) == .valid(sequence: 2, record: record))
  }

  @Test func aRecordWithoutTrustedTimeIsStillVersionOne() {
    let record = ClockMarkRecord(
      generation: 1, mark: WallClockInstant(nanosecondsSinceEpoch: 1), floor: Self.floor)
    let slot = MarkRecordCodec.encode(record, sequence: 1)
    #expect(slot.count == 128)
    #expect(slot[4] == 1)
    #expect(MarkRecordCodec.decode(slot[...]) == .valid(sequence: 1, record: record))
  }

  @Test func everyFlippedBitOfAVersionTwoSlotIsInvalid() {
    let slot = MarkRecordCodec.encode(Self.records[0], sequence: 1)
    for bit in stride(from: 0, to: 256 * 8, by: 7) {
      var damaged = slot
      damaged[bit / 8] ^= 1 << UInt8(bit % 8)
      #expect(MarkRecordCodec.decode(damaged[...]) == .invalid, "bit \(bit)")
    }
  }

  @Test func unknownFlagsInVersionTwoAreAnUnknownVersion() {
    var slot = MarkRecordCodec.encode(Self.records[0], sequence: 1)
    slot[73] |= 0x01  // flag bit 8, not defined
    let crc = MarkRecordCodec.checksum(slot[0..<252])
    for index in 0..<4 { slot[252 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    #expect(MarkRecordCodec.decode(slot[...]) == .unknownVersion(2))
  }
}
