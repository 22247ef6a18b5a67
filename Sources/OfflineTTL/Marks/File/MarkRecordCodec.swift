import CZlib

/// The on-disk form of a ``ClockMarkRecord`` in ``FileClockMarkStore``: a fixed-size file of two
/// slots, each a self-checking copy of the record with a sequence number. Documented byte by byte
/// in `docs/mark-record-format.md`; keep the two in step.
enum MarkRecordCodec {
  /// `"OTCM"`.
  static let magic: [UInt8] = [0x4F, 0x54, 0x43, 0x4D]
  /// The format version this library writes and reads.
  static let version: UInt16 = 1
  /// Bytes in one slot of version 1, checksum included.
  static let slotLength = 128
  /// Where the slots start: each in its own 4 KiB block, so a torn block write cannot damage both.
  static let slotOffsets: [Int] = [0, 4096]
  /// The exact size of a record file.
  static let fileSize = 8192
  /// Flag bit 0: the boot-clock floor is untrusted.
  static let untrustedFlag: UInt32 = 1

  /// One slot as decoded.
  enum Slot: Equatable {
    /// A version-1 slot whose checksum holds.
    case valid(sequence: UInt64, record: ClockMarkRecord)
    /// A slot whose framing and checksum hold, of a version (or with flags) this library does
    /// not know.
    case unknownVersion(UInt16)
    /// Anything else: zeros, noise, a torn or flipped slot.
    case invalid
  }

  /// The 128 bytes of a version-1 slot.
  static func encode(_ record: ClockMarkRecord, sequence: UInt64) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: slotLength)
    bytes.replaceSubrange(0..<4, with: magic)
    put(UInt64(version), 2, at: 4, in: &bytes)
    put(UInt64(slotLength), 2, at: 6, in: &bytes)
    put(sequence, 8, at: 8, in: &bytes)
    put(record.generation, 8, at: 16, in: &bytes)
    put(UInt64(bitPattern: record.mark.nanosecondsSinceEpoch), 8, at: 24, in: &bytes)
    put(UInt64(bitPattern: record.floor.lowerBound.nanosecondsSinceEpoch), 8, at: 32, in: &bytes)
    put(record.floor.anchorBootID.high, 8, at: 40, in: &bytes)
    put(record.floor.anchorBootID.low, 8, at: 48, in: &bytes)
    put(
      UInt64(bitPattern: saturatingNanoseconds(record.floor.anchorSinceBoot)), 8, at: 56, in: &bytes
    )
    put(
      UInt64(bitPattern: saturatingNanoseconds(record.floor.elapsedSinceSignIn)), 8, at: 64,
      in: &bytes)
    put(UInt64(record.floor.isUntrusted ? untrustedFlag : 0), 4, at: 72, in: &bytes)
    // 76..<124 reserved, zero.
    put(UInt64(checksum(bytes[0..<(slotLength - 4)])), 4, at: slotLength - 4, in: &bytes)
    return bytes
  }

  /// A whole record file: both slots hold `record`, with sequences `sequence` and `sequence + 1`.
  static func encodeFile(_ record: ClockMarkRecord, sequence: UInt64) -> [UInt8] {
    var file = [UInt8](repeating: 0, count: fileSize)
    for (index, offset) in slotOffsets.enumerated() {
      file.replaceSubrange(
        offset..<(offset + slotLength), with: encode(record, sequence: sequence + UInt64(index)))
    }
    return file
  }

  /// Decodes the slot at the start of `bytes` (which may be shorter than a slot).
  static func decode(_ bytes: ArraySlice<UInt8>) -> Slot {
    let base = bytes.startIndex
    guard bytes.count >= 8, Array(bytes[base..<(base + 4)]) == magic else { return .invalid }
    let slotVersion = UInt16(get(bytes, 2, at: 4))
    let length = Int(get(bytes, 2, at: 6))
    // Framing shared by every version: bytes 6–7 give the slot length L (16...4096) and the
    // last 4 bytes of the slot are the CRC-32 of the first L − 4.
    guard length >= 16, length <= 4096, bytes.count >= length else { return .invalid }
    let stored = UInt32(get(bytes, 4, at: length - 4))
    guard checksum(bytes[base..<(base + length - 4)]) == stored else { return .invalid }
    guard slotVersion == version, length == slotLength else {
      return .unknownVersion(slotVersion)
    }
    let flags = UInt32(get(bytes, 4, at: 72))
    guard flags & ~untrustedFlag == 0 else { return .unknownVersion(slotVersion) }
    let floor = BootClockFloor(
      lowerBound: WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: get(bytes, 8, at: 32))),
      anchorBootID: BootID(high: get(bytes, 8, at: 40), low: get(bytes, 8, at: 48)),
      anchorSinceBoot: .nanoseconds(Int64(bitPattern: get(bytes, 8, at: 56))),
      elapsedSinceSignIn: .nanoseconds(Int64(bitPattern: get(bytes, 8, at: 64))),
      isUntrusted: flags & untrustedFlag != 0)
    let record = ClockMarkRecord(
      generation: get(bytes, 8, at: 16),
      mark: WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: get(bytes, 8, at: 24))),
      floor: floor)
    return .valid(sequence: get(bytes, 8, at: 8), record: record)
  }

  /// zlib's CRC-32 (IEEE 802.3 polynomial, as in gzip and PNG).
  static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.withUnsafeBufferPointer { buffer in
      UInt32(truncatingIfNeeded: crc32(0, buffer.baseAddress, uInt(buffer.count)))
    }
  }

  private static func saturatingNanoseconds(_ duration: Duration) -> Int64 {
    if let exact = duration.exactNanoseconds { return exact }
    return duration < .zero ? .min : .max
  }

  private static func put(_ value: UInt64, _ width: Int, at offset: Int, in bytes: inout [UInt8]) {
    for index in 0..<width {
      bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))
    }
  }

  private static func get(_ bytes: ArraySlice<UInt8>, _ width: Int, at offset: Int) -> UInt64 {
    var value: UInt64 = 0
    let base = bytes.startIndex + offset
    for index in 0..<width {
      value |= UInt64(bytes[base + index]) << (8 * UInt64(index))
    }
    return value
  }
}
