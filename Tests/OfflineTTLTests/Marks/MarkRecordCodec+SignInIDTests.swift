import Testing

@testable import OfflineTTL

/// The sign-in id in the mark record (`docs/mark-record-format.md`, "Sign-in id"): flag bit 10 in
/// every version, the 16 bytes in the slot's reserved bytes (76..<92 of a 128-byte slot,
/// 236..<252 of a 256-byte one), covered by the checksum; a slot without the flag (every record
/// written before the id existed) reads with no id.
@Suite struct MarkRecordCodecSignInIDTests {
  static let id = SignInID(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)
  static let floor = BootClockFloor(
    lowerBound: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000),
    anchorBootID: BootID(high: 1, low: 2), anchorSinceBoot: .seconds(5),
    elapsedSinceSignIn: .seconds(3), isUntrusted: false)

  /// One record of each layout: version 1 (128 bytes), 2 (trusted time), 3 (machine bound).
  static let layouts: [ClockMarkRecord] = [
    ClockMarkRecord(
      generation: 4, mark: WallClockInstant(nanosecondsSinceEpoch: 77), floor: floor),
    ClockMarkRecord(
      generation: 5, mark: WallClockInstant(nanosecondsSinceEpoch: 78), floor: floor,
      trustedTime: TrustedTime(
        anchor: nil, lowerBound: .max, elapsedSinceAnchor: .zero, lastBoot: nil, lastTPM: nil)),
    ClockMarkRecord(
      generation: 6, mark: WallClockInstant(nanosecondsSinceEpoch: 79), floor: floor,
      machine: MachineID(high: 11, low: 12)),
  ]

  @Test(arguments: layouts)
  func theIdRoundTripsAtItsOffsetInEveryLayout(_ base: ClockMarkRecord) {
    var record = base
    record.signInID = Self.id
    let slot = MarkRecordCodec.encode(record, sequence: 9)
    let withoutID = MarkRecordCodec.encode(base, sequence: 9)
    #expect(slot.count == withoutID.count, "the id needs no longer slot")
    let offset = slot.count == 128 ? 76 : 236
    #expect(Array(slot[offset..<(offset + 16)]) == Self.id.bytes)
    #expect(Array(slot[offset..<(offset + 16)]) == Array(1...16).map(UInt8.init))
    #expect(slot[73] & 0x04 != 0, "flag bit 10")
    #expect(MarkRecordCodec.decode(slot[...]) == .valid(sequence: 9, record: record))
    // Without an id: the same bytes as before the id existed (reserved bytes zero, no flag).
    #expect(withoutID[offset..<(offset + 16)].allSatisfy { $0 == 0 })
    #expect(withoutID[73] & 0x04 == 0)
    #expect(MarkRecordCodec.decode(withoutID[...]) == .valid(sequence: 9, record: base))
  }

  @Test func everyBitOfTheIdIsCoveredByTheChecksum() {
    var record = Self.layouts[0]
    record.signInID = Self.id
    let slot = MarkRecordCodec.encode(record, sequence: 1)
    for bit in (76 * 8)..<(92 * 8) {
      var damaged = slot
      damaged[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
      #expect(MarkRecordCodec.decode(damaged[...]) == .invalid, "bit \(bit)")
    }
  }

  /// A version-1 slot built by hand from the documented layout, as a writer before sign-in ids
  /// wrote it: read with no id, every other field as written.
  @Test func aSlotOfTheFormatBeforeTheIdReadsWithNoID() {
    var slot = [UInt8](repeating: 0, count: 128)
    func put(_ value: UInt64, _ width: Int, at offset: Int) {
      for index in 0..<width {
        slot[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
      }
    }
    slot.replaceSubrange(0..<4, with: Array("OTCM".utf8))
    put(1, 2, at: 4)
    put(128, 2, at: 6)
    put(3, 8, at: 8)
    put(2, 8, at: 16)
    put(500, 8, at: 24)
    put(400, 8, at: 32)
    put(0, 4, at: 72)
    put(UInt64(MarkRecordCodec.checksum(slot[0..<124])), 4, at: 124)
    guard case .valid(let sequence, let record) = MarkRecordCodec.decode(slot[...]) else {
      Issue.record("the old slot was not read")
      return
    }
    #expect(sequence == 3)
    #expect(record.generation == 2)
    #expect(record.mark == WallClockInstant(nanosecondsSinceEpoch: 500))
    #expect(record.signInID == nil)
  }

  /// A flag this version does not know (bit 11) is still an unknown version, with or without
  /// the id flag.
  @Test func anUnknownFlagBesideTheIdIsAnUnknownVersion() {
    var record = Self.layouts[0]
    record.signInID = Self.id
    var slot = MarkRecordCodec.encode(record, sequence: 1)
    slot[73] |= 0x08
    let crc = MarkRecordCodec.checksum(slot[0..<124])
    for index in 0..<4 { slot[124 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    #expect(MarkRecordCodec.decode(slot[...]) == .unknownVersion(1))
  }

  /// Observations carry the id unchanged; a record of another sign-in never covers one of this
  /// sign-in (group commit).
  @Test func observationsKeepTheIdAndCoveringComparesIt() {
    var record = Self.layouts[0]
    record.signInID = Self.id
    let next = record.observing(ClockObservation(wall: WallClockInstant(nanosecondsSinceEpoch: 90)))
    #expect(next.signInID == Self.id)
    var other = next
    other.signInID = SignInID(high: 1, low: 1)
    #expect(next.covers(next))
    #expect(!other.covers(next))
  }

  @Test func theIdIsSixteenBytesBigEndianAndRandomIdsDiffer() {
    #expect(SignInID(bytes: Self.id.bytes) == Self.id)
    #expect(SignInID(bytes: [UInt8](repeating: 0, count: 15)) == nil)
    #expect(Self.id.description == "0102030405060708090a0b0c0d0e0f10")
    let drawn = Set((0..<64).map { _ in SignInID.random() })
    #expect(drawn.count == 64)
  }
}
