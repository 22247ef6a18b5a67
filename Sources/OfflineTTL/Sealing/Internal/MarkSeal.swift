/// The seal of one clock-mark slot in a sealed ``FileClockMarkStore``: a 52-byte trailer written
/// right after the slot, in the same 4 KiB block (so the slot and its seal are written by one
/// `pwrite` and survive or tear together).
///
/// | offset | length | field |
/// |---|---|---|
/// | 0 | 4 | magic `OTSL` |
/// | 4 | 8 | store id: random, chosen when the sealed record is created, kept by every reset |
/// | 12 | 8 | key check (``SealKeys/check``): tells "another key" from "altered" |
/// | 20 | 32 | BLAKE2b-256 keyed with the mark subkey over the slot's bytes then bytes 0..<20 |
///
/// The MAC covers the whole slot (whatever its version and length), so no field of the record,
/// including its generation and sequence, can be changed without the key.
enum MarkSeal {
  static let magic: [UInt8] = Array("OTSL".utf8)
  static let length = 52
  static let storeIDLength = 8

  /// What a sealed operation needs: the subkeys and the store's id.
  struct Context {
    let keys: SealKeys
    let storeID: [UInt8]
  }

  /// How a slot's trailer reads.
  enum Verdict: Equatable {
    /// No trailer: an unsealed slot.
    case unsealed
    /// A trailer whose key check is not this key's.
    case otherKey
    /// A trailer with this key's check whose MAC fails.
    case altered
    /// Authentic, with this store id.
    case authentic(storeID: [UInt8])
  }

  static func trailer(slot: ArraySlice<UInt8>, context: Context) -> [UInt8] {
    var head = magic + context.storeID + context.keys.check
    head += Sodium.mac([Array(slot), head], key: context.keys.mark)
    return head
  }

  /// Whether `trailer` starts with the seal's magic (a sealed slot, whatever the key).
  static func isPresent(_ trailer: ArraySlice<UInt8>) -> Bool {
    trailer.count >= length && Array(trailer.prefix(4)) == magic
  }

  static func verify(slot: ArraySlice<UInt8>, trailer: ArraySlice<UInt8>, keys: SealKeys)
    -> Verdict
  {
    guard isPresent(trailer) else { return .unsealed }
    let bytes = Array(trailer.prefix(length))
    let head = Array(bytes[0..<20])
    guard Sodium.equalInConstantTime(bytes[12..<20], keys.check) else { return .otherKey }
    let expected = Sodium.mac([Array(slot), head], key: keys.mark)
    guard Sodium.equalInConstantTime(bytes[20..<52], expected) else { return .altered }
    return .authentic(storeID: Array(bytes[4..<12]))
  }
}
