import Testing

@testable import OfflineTTL

@Suite struct MarkRecordCodecTests {
  let record = ClockMarkRecord(
    generation: 7, mark: WallClockInstant(nanosecondsSinceEpoch: -12_345),
    floor: BootClockFloor(
      lowerBound: WallClockInstant(nanosecondsSinceEpoch: .max),
      anchorBootID: BootID(high: 1, low: .max), anchorSinceBoot: .nanoseconds(99),
      elapsedSinceSignIn: .seconds(3), isUntrusted: true))

  @Test func roundTripsEveryField() {
    let slot = MarkRecordCodec.encode(record, sequence: 42)
    #expect(slot.count == 128)
    #expect(Array(slot[0..<4]) == Array("OTCM".utf8))
    #expect(MarkRecordCodec.decode(slot[...]) == .valid(sequence: 42, record: record))
  }

  @Test func everySingleBitFlipIsDetected() {
    let slot = MarkRecordCodec.encode(record, sequence: 1)
    for bit in 0..<(slot.count * 8) {
      var damaged = slot
      damaged[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
      #expect(MarkRecordCodec.decode(damaged[...]) == .invalid, "bit \(bit)")
    }
  }

  @Test func aChecksummedSlotOfAnotherVersionIsUnknownNotInvalid() {
    var slot = MarkRecordCodec.encode(record, sequence: 1)
    slot[4] = 2
    let crc = MarkRecordCodec.checksum(slot[0..<124])
    for index in 0..<4 { slot[124 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    #expect(MarkRecordCodec.decode(slot[...]) == .unknownVersion(2))
  }

  @Test func theWholeFileHoldsTheRecordInBothSlots() throws {
    let file = MarkRecordCodec.encodeFile(record, sequence: 1)
    #expect(file.count == 8192)
    #expect(MarkRecordCodec.decode(file[0..<4096]) == .valid(sequence: 1, record: record))
    #expect(MarkRecordCodec.decode(file[4096..<8192]) == .valid(sequence: 2, record: record))
  }

  @Test func zlibCRC32MatchesTheStandardCheckValue() {
    #expect(MarkRecordCodec.checksum(Array("123456789".utf8)[...]) == 0xCBF4_3926)
  }
}
