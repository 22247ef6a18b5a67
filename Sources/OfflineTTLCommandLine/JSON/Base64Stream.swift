/// Standard base64 (RFC 4648 section 4, with `=` padding) of a byte stream that arrives in
/// chunks, through one fixed output buffer: the encoding of the concatenated chunks, whatever
/// their sizes (up to 2 bytes are carried from one chunk to the next).
///
/// Not thread-safe; one stream per instance. Memory: 4/3 of the largest chunk, allocated once.
final class Base64Stream {
  private static let alphabet: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  private let table: UnsafeMutablePointer<UInt8>
  /// Two output characters for every 12 input bits, the first character in the low byte.
  private let pairs: UnsafeMutablePointer<UInt16>
  private var output: UnsafeMutableRawBufferPointer
  private var carry: (UInt8, UInt8) = (0, 0)
  private var carried = 0

  /// Creates an encoder whose buffer fits chunks of up to `chunkSize` bytes (it grows for
  /// larger ones).
  ///
  /// - Parameter chunkSize: The expected largest chunk, in bytes.
  init(chunkSize: Int) {
    table = .allocate(capacity: 64)
    table.initialize(from: Self.alphabet, count: 64)
    pairs = .allocate(capacity: 4096)
    for index in 0..<4096 {
      pairs[index] = UInt16(Self.alphabet[index >> 6]) | UInt16(Self.alphabet[index & 63]) << 8
    }
    output = .allocate(byteCount: Self.outputSize(for: Swift.max(1, chunkSize)), alignment: 16)
  }

  deinit {
    table.deallocate()
    pairs.deallocate()
    output.deallocate()
  }

  private static func outputSize(for count: Int) -> Int { (count / 3 + 2) * 4 }

  /// Encodes `bytes` after what came before, and hands the text that is complete to `sink`
  /// (the buffer is valid only during the call).
  ///
  /// - Complexity: O(`bytes.count`).
  func encode(_ bytes: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) -> Void) {
    guard !bytes.isEmpty else { return }
    if Self.outputSize(for: bytes.count) > output.count {
      output.deallocate()
      output = .allocate(byteCount: Self.outputSize(for: bytes.count), alignment: 16)
    }
    let source = bytes.bindMemory(to: UInt8.self)
    let destination = output.bindMemory(to: UInt8.self)
    var index = 0
    var written = 0
    if carried > 0 {
      var group: [UInt8] = carried == 1 ? [carry.0] : [carry.0, carry.1]
      while group.count < 3, index < source.count {
        group.append(source[index])
        index += 1
      }
      if group.count < 3 {
        store(group)
        return
      }
      put(group[0], group[1], group[2], at: &written, in: destination)
      carried = 0
    }
    // The hot loop: 3 bytes in, two table lookups of 12 bits each, one 4-byte store.
    let pairs = self.pairs
    if let base = source.baseAddress, let out = output.baseAddress {
      let end = index + (source.count - index) / 3 * 3
      while index < end {
        let value =
          UInt32(base[index]) << 16 | UInt32(base[index + 1]) << 8 | UInt32(base[index + 2])
        let text = UInt32(pairs[Int(value >> 12)]) | UInt32(pairs[Int(value & 0xFFF)]) << 16
        out.storeBytes(of: text.littleEndian, toByteOffset: written, as: UInt32.self)
        index += 3
        written += 4
      }
    }
    store(Array(source[index...]))
    sink(UnsafeRawBufferPointer(rebasing: output[0..<written]))
  }

  /// Hands the padded last group (when 1 or 2 bytes are carried) to `sink`.
  func finish(to sink: (UnsafeRawBufferPointer) -> Void) {
    guard carried > 0 else { return }
    let first = carry.0
    let second = carried == 2 ? carry.1 : 0
    let value = UInt32(first) << 16 | UInt32(second) << 8
    var text: [UInt8] = [table[Int(value >> 18)], table[Int((value >> 12) & 63)]]
    text.append(carried == 2 ? table[Int((value >> 6) & 63)] : UInt8(ascii: "="))
    text.append(UInt8(ascii: "="))
    carried = 0
    text.withUnsafeBytes { sink($0) }
  }

  private func store(_ rest: [UInt8]) {
    carried = rest.count
    if rest.count > 0 { carry.0 = rest[0] }
    if rest.count > 1 { carry.1 = rest[1] }
  }

  private func put(
    _ a: UInt8, _ b: UInt8, _ c: UInt8, at written: inout Int,
    in destination: UnsafeMutableBufferPointer<UInt8>
  ) {
    let value = UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
    destination[written] = table[Int(value >> 18)]
    destination[written + 1] = table[Int((value >> 12) & 63)]
    destination[written + 2] = table[Int((value >> 6) & 63)]
    destination[written + 3] = table[Int(value & 63)]
    written += 4
  }
}
