import CZlib

/// The on-disk form of a ``ClockMarkRecord`` in ``FileClockMarkStore``: a fixed-size file of two
/// slots, each a self-checking copy of the record with a sequence number. Documented byte by byte
/// in `docs/mark-record-format.md`; keep the two in step.
enum MarkRecordCodec {
  /// `"OTCM"`.
  static let magic: [UInt8] = [0x4F, 0x54, 0x43, 0x4D]
  /// The format version this library writes for a record without trusted time (and reads).
  static let version: UInt16 = 1
  /// Bytes in one slot of version 1, checksum included.
  static let slotLength = 128
  /// The format version of a record with trusted time or a TPM reading (read as well).
  static let trustedVersion: UInt16 = 2
  /// Bytes in one slot of version 2, checksum included.
  static let trustedSlotLength = 256
  /// The format version of a record bound to a machine (version 2's layout, with the machine
  /// id at 220..<236 and two more flags; read as well).
  static let boundVersion: UInt16 = 3
  /// The longest slot this library writes (what a failed write puts back).
  static let maximumSlotLength = 256
  /// Version-2 flag bits (bit 0 as in version 1).
  static let trustedFlags: UInt32 = 0xFE
  private static let anchorFlag: UInt32 = 1 << 1
  private static let lastBootFlag: UInt32 = 1 << 2
  private static let lastTPMFlag: UInt32 = 1 << 3
  private static let lastTPMSafeFlag: UInt32 = 1 << 4
  private static let anchorBootFlag: UInt32 = 1 << 5
  private static let anchorTPMFlag: UInt32 = 1 << 6
  private static let anchorTPMSafeFlag: UInt32 = 1 << 7
  /// Version-3 flag: the machine id at 220..<236 holds.
  private static let machineFlag: UInt32 = 1 << 8
  /// Version-3 flag: the version-2 fields (76..<220) hold trusted time.
  private static let trustedPresentFlag: UInt32 = 1 << 9
  /// Flag of every version: the record carries the id of the sign-in that wrote its generation
  /// (``ClockMarkRecord/signInID``), at ``signInIDOffset(slotLength:)``. A reader without it
  /// sees an unknown flag and refuses the slot (`unknown_version`), so an older library never
  /// rolls forward a staging this id would refuse.
  static let signInFlag: UInt32 = 1 << 10
  /// Where the slots start: each in its own 4 KiB block, so a torn block write cannot damage both.
  static let slotOffsets: [Int] = [0, 4096]
  /// The exact size of a record file.
  static let fileSize = 8192
  /// Flag bit 0: the boot-clock floor is untrusted.
  static let untrustedFlag: UInt32 = 1

  /// Where the sign-in id sits: in the reserved bytes of each layout, 76..<92 of a 128-byte
  /// slot (version 1), 236..<252 of a 256-byte slot (versions 2 and 3).
  static func signInIDOffset(slotLength length: Int) -> Int {
    length == slotLength ? 76 : 236
  }

  /// One slot as decoded.
  enum Slot: Equatable {
    /// A slot of a version this library reads (1, 2 or 3) whose checksum holds.
    case valid(sequence: UInt64, record: ClockMarkRecord)
    /// A slot whose framing and checksum hold, of a version (or with flags) this library does
    /// not know.
    case unknownVersion(UInt16)
    /// Anything else: zeros, noise, a torn or flipped slot.
    case invalid
  }

  /// The 256 bytes of a version-3 slot when the record is bound to a machine, else the 256
  /// bytes of a version-2 slot when it has trusted time, else the 128 bytes of a version-1 slot
  /// (byte for byte as before versions 2 and 3 existed).
  static func encode(_ record: ClockMarkRecord, sequence: UInt64) -> [UInt8] {
    let bound = record.machine != nil
    let length = record.trustedTime == nil && !bound ? slotLength : trustedSlotLength
    let slotVersion = bound ? boundVersion : record.trustedTime == nil ? version : trustedVersion
    var bytes = [UInt8](repeating: 0, count: length)
    bytes.replaceSubrange(0..<4, with: magic)
    put(UInt64(slotVersion), 2, at: 4, in: &bytes)
    put(UInt64(length), 2, at: 6, in: &bytes)
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
    var flags = record.floor.isUntrusted ? untrustedFlag : 0
    if let trusted = record.trustedTime {
      flags |= encodeTrusted(trusted, into: &bytes)
      if bound { flags |= trustedPresentFlag }
    }
    if let machine = record.machine {
      flags |= machineFlag
      put(machine.high, 8, at: 220, in: &bytes)
      put(machine.low, 8, at: 228, in: &bytes)
    }
    if let signIn = record.signInID {
      flags |= signInFlag
      bytes.replaceSubrange(
        signInIDOffset(slotLength: length)..<(signInIDOffset(slotLength: length) + 16),
        with: signIn.bytes)
    }
    put(UInt64(flags), 4, at: 72, in: &bytes)
    // Version 1: 76..<124 reserved, zero (76..<92 the sign-in id when flagged). Version 2:
    // 220..<252 reserved, zero (236..<252 the sign-in id when flagged). Version 3: 236..<252
    // reserved, zero, or the sign-in id when flagged.
    put(UInt64(checksum(bytes[0..<(length - 4)])), 4, at: length - 4, in: &bytes)
    return bytes
  }

  /// Writes the version-2 fields (offsets 76..<220) and returns their flag bits.
  private static func encodeTrusted(_ trusted: TrustedTime, into bytes: inout [UInt8]) -> UInt32 {
    var flags: UInt32 = 0
    func instant(_ value: WallClockInstant, _ offset: Int) {
      put(UInt64(bitPattern: value.nanosecondsSinceEpoch), 8, at: offset, in: &bytes)
    }
    func duration(_ value: Duration, _ offset: Int) {
      put(UInt64(bitPattern: saturatingNanoseconds(value)), 8, at: offset, in: &bytes)
    }
    instant(trusted.lowerBound, 76)
    duration(trusted.elapsedSinceAnchor, 84)
    if let anchor = trusted.anchor {
      flags |= anchorFlag
      instant(anchor.serverTime, 92)
      duration(anchor.uncertainty, 100)
      if let boot = anchor.boot {
        flags |= anchorBootFlag
        put(boot.bootID.high, 8, at: 180, in: &bytes)
        put(boot.bootID.low, 8, at: 188, in: &bytes)
        duration(boot.sinceBoot, 196)
      }
      if let tpm = anchor.tpm {
        flags |= anchorTPMFlag | (tpm.isSafe ? anchorTPMSafeFlag : 0)
        put(tpm.clockMilliseconds, 8, at: 204, in: &bytes)
        put(UInt64(tpm.resetCount), 4, at: 212, in: &bytes)
        put(UInt64(tpm.restartCount), 4, at: 216, in: &bytes)
      }
    }
    if let boot = trusted.lastBoot {
      flags |= lastBootFlag
      put(boot.bootID.high, 8, at: 108, in: &bytes)
      put(boot.bootID.low, 8, at: 116, in: &bytes)
      duration(boot.sinceBoot, 124)
    }
    // The anchor's TPM reading shares the last reading's identity (a TPM of another identity
    // is refused before anything is written).
    if let tpm = trusted.lastTPM ?? trusted.anchor?.tpm {
      if trusted.lastTPM != nil {
        flags |= lastTPMFlag | (tpm.isSafe ? lastTPMSafeFlag : 0)
      }
      bytes.replaceSubrange(132..<164, with: tpm.identity.bytes)
      put(tpm.clockMilliseconds, 8, at: 164, in: &bytes)
      put(UInt64(tpm.resetCount), 4, at: 172, in: &bytes)
      put(UInt64(tpm.restartCount), 4, at: 176, in: &bytes)
    }
    return flags
  }

  /// Reads the version-2 fields (see ``encodeTrusted(_:into:)``).
  private static func decodeTrusted(_ bytes: ArraySlice<UInt8>, flags: UInt32) -> TrustedTime {
    func instant(_ offset: Int) -> WallClockInstant {
      WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: get(bytes, 8, at: offset)))
    }
    func duration(_ offset: Int) -> Duration {
      .nanoseconds(Int64(bitPattern: get(bytes, 8, at: offset)))
    }
    func boot(_ offset: Int) -> BootClockReading {
      BootClockReading(
        bootID: BootID(high: get(bytes, 8, at: offset), low: get(bytes, 8, at: offset + 8)),
        sinceBoot: duration(offset + 16))
    }
    let base = bytes.startIndex
    let identity = TPMIdentity(bytes: bytes[(base + 132)..<(base + 164)]) ?? .none
    func tpm(_ offset: Int, safe: Bool) -> TPMClockReading {
      TPMClockReading(
        identity: identity, clockMilliseconds: get(bytes, 8, at: offset),
        resetCount: UInt32(get(bytes, 4, at: offset + 8)),
        restartCount: UInt32(get(bytes, 4, at: offset + 12)), isSafe: safe)
    }
    var anchor: TrustedTimeAnchor?
    if flags & anchorFlag != 0 {
      anchor = try? TrustedTimeAnchor(
        serverTime: instant(92), uncertainty: Swift.max(.zero, duration(100)),
        boot: flags & anchorBootFlag != 0 ? boot(180) : nil,
        tpm: flags & anchorTPMFlag != 0
          ? tpm(204, safe: flags & anchorTPMSafeFlag != 0) : nil)
    }
    return TrustedTime(
      anchor: anchor, lowerBound: instant(76), elapsedSinceAnchor: duration(84),
      lastBoot: flags & lastBootFlag != 0 ? boot(108) : nil,
      lastTPM: flags & lastTPMFlag != 0 ? tpm(164, safe: flags & lastTPMSafeFlag != 0) : nil)
  }

  /// A whole record file: both slots hold `record`, with sequences `sequence` and `sequence + 1`.
  static func encodeFile(_ record: ClockMarkRecord, sequence: UInt64) -> [UInt8] {
    var file = [UInt8](repeating: 0, count: fileSize)
    for (index, offset) in slotOffsets.enumerated() {
      let slot = encode(record, sequence: sequence + UInt64(index))
      file.replaceSubrange(offset..<(offset + slot.count), with: slot)
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
    let isTrusted = slotVersion == trustedVersion && length == trustedSlotLength
    let isBound = slotVersion == boundVersion && length == trustedSlotLength
    guard (slotVersion == version && length == slotLength) || isTrusted || isBound else {
      return .unknownVersion(slotVersion)
    }
    let flags = UInt32(get(bytes, 4, at: 72))
    let known =
      signInFlag
      | (isBound
        ? untrustedFlag | trustedFlags | machineFlag | trustedPresentFlag
        : isTrusted ? untrustedFlag | trustedFlags : untrustedFlag)
    guard flags & ~known == 0 else { return .unknownVersion(slotVersion) }
    let hasTrusted = isTrusted || (isBound && flags & trustedPresentFlag != 0)
    // Trusted-time flags without trusted time: not a slot this library writes.
    guard hasTrusted || flags & trustedFlags == 0 else { return .unknownVersion(slotVersion) }
    let floor = BootClockFloor(
      lowerBound: WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: get(bytes, 8, at: 32))),
      anchorBootID: BootID(high: get(bytes, 8, at: 40), low: get(bytes, 8, at: 48)),
      anchorSinceBoot: .nanoseconds(Int64(bitPattern: get(bytes, 8, at: 56))),
      elapsedSinceSignIn: .nanoseconds(Int64(bitPattern: get(bytes, 8, at: 64))),
      isUntrusted: flags & untrustedFlag != 0)
    let signInAt = base + signInIDOffset(slotLength: length)
    let record = ClockMarkRecord(
      generation: get(bytes, 8, at: 16),
      mark: WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: get(bytes, 8, at: 24))),
      floor: floor, trustedTime: hasTrusted ? decodeTrusted(bytes, flags: flags) : nil,
      machine: isBound && flags & machineFlag != 0
        ? MachineID(high: get(bytes, 8, at: 220), low: get(bytes, 8, at: 228)) : nil,
      signInID: flags & signInFlag != 0
        ? SignInID(bytes: bytes[signInAt..<(signInAt + 16)]) : nil)
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
