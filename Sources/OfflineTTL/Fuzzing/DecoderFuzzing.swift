/// Fuzz entry points for the decoders of bytes read from disk and of text read from people:
/// package API (invisible to a package that depends on OfflineTTL), called by the
/// `offline-ttl-fuzz` libFuzzer target (`Scripts/fuzz.sh`) and by the regression tests that
/// replay each input it found.
///
/// Each entry point takes arbitrary bytes, runs one decoder over them and checks the decoder's
/// own promises: it returns (never traps), a failure is a typed value, and whatever it accepts
/// encodes back to the same value. A broken promise is returned as a sentence; a crash is a crash.
/// The first input byte is a mode byte where a checksum guards the data: with bit 0 set, the
/// entry point fixes the checksums of the rest so that the fuzzer reaches the code behind them.
///
/// - Complexity: O(n) in the input's length for every entry point.
package enum DecoderFuzzing {
  /// The mark record: one slot (``MarkRecordCodec/decode(_:)``) and the whole two-slot file
  /// (`FileClockMarkStore.newest(in:fd:)`), then the decoded record through the mark and floor
  /// arithmetic (which must saturate, never trap, whatever a record holds).
  ///
  /// - Parameter input: Mode byte, then the record's bytes (padded with zeros or cut to 8 KiB
  ///   for the whole-file decoder).
  /// - Returns: The broken promises; empty when every promise held.
  package static func markRecord(_ input: [UInt8]) -> [String] {
    var problems: [String] = []
    let (fixChecksums, data) = split(input)
    var file = Array(data.prefix(MarkRecordCodec.fileSize))
    file += [UInt8](repeating: 0, count: MarkRecordCodec.fileSize - file.count)
    if fixChecksums {
      for offset in MarkRecordCodec.slotOffsets {
        let length = Int(file[offset + 6]) | Int(file[offset + 7]) << 8
        guard length >= 16, length <= 4096 else { continue }
        let sum = MarkRecordCodec.checksum(file[offset..<(offset + length - 4)])
        for index in 0..<4 {
          file[offset + length - 4 + index] = UInt8(truncatingIfNeeded: sum >> (8 * index))
        }
      }
    }
    // One slot over the raw bytes, of any length.
    if case .valid(let sequence, let record) = MarkRecordCodec.decode(data[...]) {
      let encoded = MarkRecordCodec.encode(record, sequence: sequence)
      if MarkRecordCodec.decode(encoded[...]) != .valid(sequence: sequence, record: record) {
        problems.append("mark record: a decoded slot does not decode again after encoding")
      }
      if !encoded[0..<76].elementsEqual(data.prefix(76)) {
        problems.append("mark record: encoding a decoded slot changes its fields")
      }
      if let signIn = record.signInID {
        let at = MarkRecordCodec.signInIDOffset(slotLength: encoded.count)
        let stored = data.dropFirst(at).prefix(16)
        if !encoded[at..<(at + 16)].elementsEqual(stored) || SignInID(bytes: stored) != signIn {
          problems.append("mark record: a decoded sign-in id is not the slot's bytes")
        }
      }
    }
    // The whole file, as the store reads it.
    let slots = MarkRecordCodec.slotOffsets.map { MarkRecordCodec.decode(file[$0..<($0 + 4096)]) }
    do {
      let loaded = try FileClockMarkStore.newest(in: file, fd: FileDescriptor(rawValue: -1))
      let newest = slots.compactMap { slot -> UInt64? in
        if case .valid(let sequence, _) = slot { return sequence }
        return nil
      }.max()
      if loaded.sequence != newest {
        problems.append("mark record: the newest valid slot was not the one loaded")
      }
      if slots.contains(where: { if case .unknownVersion = $0 { true } else { false } }) {
        problems.append("mark record: loaded past a slot of an unknown version")
      }
      problems += exercise(loaded.record, with: data)
    } catch {
      if error.code != .unreadable {
        problems.append("mark record: a bad file gave \(error.code), not unreadable")
      }
    }
    return problems
  }

  /// The cache index: the 72-byte header (`DirectoryCacheStore.decodeIndexHeader(_:)`) and the
  /// body (`DirectoryCacheStore.decodeIndexBody(_:)`). Whatever decodes must be a catalog the
  /// writer could have written: valid keys, a summary that matches, and an encoding that decodes
  /// to the same catalog.
  ///
  /// - Parameter input: Mode byte, then the header and body.
  /// - Returns: The broken promises; empty when every promise held.
  package static func cacheIndex(_ input: [UInt8]) -> [String] {
    var problems: [String] = []
    let (fixChecksums, data) = split(input)
    var bytes = Array(data)
    let headerSize = CacheFormat.indexHeaderSize
    if fixChecksums, bytes.count >= headerSize {
      let bodyLength = bytes.count - headerSize
      var header = Array(bytes[0..<headerSize])
      for index in 0..<8 {
        header[56 + index] = UInt8(truncatingIfNeeded: UInt64(bodyLength) >> (8 * index))
      }
      let bodySum = CacheFormat.crc(bytes[headerSize...])
      for index in 0..<4 { header[64 + index] = UInt8(truncatingIfNeeded: bodySum >> (8 * index)) }
      let headerSum = CacheFormat.crc(header[0..<68])
      for index in 0..<4 {
        header[68 + index] = UInt8(truncatingIfNeeded: headerSum >> (8 * index))
      }
      bytes.replaceSubrange(0..<headerSize, with: header)
    }
    guard bytes.count >= headerSize,
      let header = DirectoryCacheStore.decodeIndexHeader(Array(bytes[0..<headerSize]))
    else {
      // The body decoder on its own, over anything.
      if let entries = DirectoryCacheStore.decodeIndexBody(bytes) {
        problems += checkCatalog(entries, stamp: DirectoryStamp())
      }
      return problems
    }
    if header.summary.count > 0, let oldest = header.summary.oldest,
      let newest = header.summary.newest, oldest > newest
    {
      problems.append("cache index: a header with oldest after newest was accepted")
    }
    guard
      let catalog = DirectoryCacheStore.decodeIndexBody(Array(bytes[headerSize...]), header: header)
    else { return problems }
    let entries = catalog.entries
    if catalog.summary != header.summary || entries.count != header.summary.count {
      problems.append("cache index: the body's items disagree with the header's summary")
    }
    problems += checkCatalog(entries, stamp: header.stamp)
    return problems
  }

  /// The item file: its header (``CacheFormat/decodeItemHeader(_:)``), then the payload length
  /// and checksum checks the reader applies. An accepted item re-encodes to the same header.
  ///
  /// - Parameter input: Mode byte, then the item file's bytes.
  /// - Returns: The broken promises; empty when every promise held.
  package static func itemHeader(_ input: [UInt8]) -> [String] {
    var problems: [String] = []
    let (fixChecksums, data) = split(input)
    var bytes = Array(data)
    let headerSize = CacheFormat.itemHeaderSize
    if fixChecksums, bytes.count >= headerSize {
      let length = UInt64(bytes.count - headerSize)
      for index in 0..<8 { bytes[16 + index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
      let sum = CacheFormat.crc(bytes[headerSize...], seed: CacheFormat.crc(bytes[0..<24]))
      for index in 0..<4 { bytes[24 + index] = UInt8(truncatingIfNeeded: sum >> (8 * index)) }
    }
    guard case .success(let header) = CacheFormat.decodeItemHeader(bytes) else {
      if bytes.count >= headerSize, Array(bytes[0..<4]) == CacheFormat.itemMagic,
        case .failure(.badMagic) = CacheFormat.decodeItemHeader(bytes)
      {
        problems.append("item header: the item magic was called bad")
      }
      return problems
    }
    // The reader's checks after the header: the payload's length and checksum.
    let payload = bytes[headerSize...]
    guard UInt64(payload.count) == header.payloadLength,
      CacheFormat.crc(payload, seed: CacheFormat.crc(bytes[0..<24])) == header.checksum
    else { return problems }
    let reencoded = payload.withUnsafeBytes { raw in
      CacheFormat.itemHeader(writtenAt: header.writtenAt, payload: raw)
    }
    if !reencoded.elementsEqual(bytes[0..<headerSize]) {
      problems.append("item header: an accepted item does not encode back to its bytes")
    }
    return problems
  }

  /// The sealed item file's header (`CacheSeal.decodeItemHeader(_:fileSize:)`), which a sealed
  /// read decodes and checks against the file's size before it allocates anything for the
  /// payload or reads a tag. It returns for any bytes and any size; it says `unsealed` exactly
  /// when the bytes do not start like a sealed item; and what it accepts is what the bytes say:
  /// version 2 or 3, a payload of at most 1 GiB, a file of exactly the header, the payload and
  /// 16 bytes per chunk, and the prefix, nonce, `writtenAt` and generation read from their
  /// places.
  ///
  /// - Parameter input: Mode byte, the file's size (8 bytes, little-endian, any `Int64`), then
  ///   the file's first bytes. With bit 0 of the mode byte set, the size is replaced by the one
  ///   the header's length implies (when the length is plausible), so the fuzzer reaches the
  ///   accepting path.
  /// - Returns: The broken promises; empty when every promise held.
  package static func sealedItemHeader(_ input: [UInt8]) -> [String] {
    var problems: [String] = []
    let (fixSize, data) = split(input)
    let sizeBytes = Array(data.prefix(8)) + [UInt8](repeating: 0, count: max(0, 8 - data.count))
    var fileSize = Int64(bitPattern: sizeBytes.littleEndianUInt64(at: 0))
    let head = Array(data.dropFirst(8))
    let headerSize = CacheSeal.itemHeaderSize
    if fixSize, head.count >= headerSize, CacheSeal.looksSealedItem(head) {
      let length = head.littleEndianUInt64(at: 16)
      if length <= CacheFormat.maximumPayloadLength {
        let version = head.littleEndianUInt32(at: 4)
        let chunks =
          version == CacheSeal.wholeItemVersion
          ? 1 : CacheSeal.chunkCount(payloadLength: Int(length))
        fileSize = Int64(headerSize) + Int64(length) + Int64(chunks * Sodium.tagLength)
      }
    }
    switch CacheSeal.decodeItemHeader(head, fileSize: fileSize) {
    case .failure(.unsealed):
      if CacheSeal.looksSealedItem(head) {
        problems.append("sealed item header: a sealed item's start was called unsealed")
      }
    case .failure(.otherKey):
      problems.append("sealed item header: the header alone was said to need another key")
    case .failure(.unauthentic):
      if !CacheSeal.looksSealedItem(head) {
        problems.append("sealed item header: bytes that are not a sealed item were unauthentic")
      }
    case .success(let header):
      if !CacheSeal.looksSealedItem(head) || head.count < headerSize {
        problems.append("sealed item header: accepted bytes that are not a whole sealed header")
        return problems
      }
      if header.version != head.littleEndianUInt32(at: 4)
        || ![CacheSeal.itemVersion, CacheSeal.wholeItemVersion].contains(header.version)
      {
        problems.append("sealed item header: accepted version \(header.version)")
      }
      if header.payloadLength < 0
        || UInt64(header.payloadLength) != head.littleEndianUInt64(at: 16)
        || UInt64(header.payloadLength) > CacheFormat.maximumPayloadLength
      {
        problems.append("sealed item header: accepted length \(header.payloadLength)")
      }
      if Int64(headerSize + header.payloadLength + header.tagsLength) != fileSize
        || header.tagsLength != header.chunkCount * Sodium.tagLength || header.chunkCount < 1
      {
        problems.append("sealed item header: accepted a file size its header does not imply")
      }
      if header.prefix != Array(head[0..<32]) || header.nonce != Array(head[32..<headerSize]) {
        problems.append("sealed item header: the prefix or nonce is not the header's bytes")
      }
      if header.entry.writtenAt.nanosecondsSinceEpoch
        != Int64(bitPattern: head.littleEndianUInt64(at: 8))
        || header.entry.generation != head.littleEndianUInt64(at: 24)
      {
        problems.append("sealed item header: writtenAt or the generation is not the header's")
      }
      // Every chunk range lies inside the payload, in order, and they cover it.
      var next = 0
      for index in 0..<min(header.chunkCount, 4) {
        let range = header.chunkRange(index)
        if range.lowerBound != next || range.upperBound > header.payloadLength {
          problems.append("sealed item header: chunk \(index) lies outside its place")
        }
        next = range.upperBound
      }
      if header.chunkCount <= 4, next != header.payloadLength {
        problems.append("sealed item header: the chunks do not cover the payload")
      }
    }
    return problems
  }

  /// The RFC 3339 reader (``WallClockInstant/init(rfc3339:)``): accepted text formats back
  /// (``WallClockInstant/rfc3339``) to text that reads as the same instant, and the first 8
  /// bytes, as an instant, format to text that reads back exactly.
  ///
  /// - Parameter input: The text's bytes (invalid UTF-8 is replaced, as `String(decoding:)` does).
  /// - Returns: The broken promises; empty when every promise held.
  package static func rfc3339(_ input: [UInt8]) -> [String] {
    var problems: [String] = []
    let text = String(decoding: input, as: UTF8.self)
    do {
      let instant = try WallClockInstant(rfc3339: text)
      if (try? WallClockInstant(rfc3339: instant.rfc3339)) != instant {
        problems.append("rfc3339: '\(text)' does not read back from its formatted text")
      }
    } catch {
      if error.code != .invalidOption && error.code != .outOfRange {
        problems.append("rfc3339: '\(text)' was refused with code \(error.code)")
      }
    }
    var raw: UInt64 = 0
    for (index, byte) in input.prefix(8).enumerated() { raw |= UInt64(byte) << (8 * index) }
    let instant = WallClockInstant(nanosecondsSinceEpoch: Int64(bitPattern: raw))
    if (try? WallClockInstant(rfc3339: instant.rfc3339)) != instant {
      problems.append("rfc3339: \(instant) does not read back from '\(instant.rfc3339)'")
    }
    return problems
  }

  /// Splits the mode byte from the data.
  private static func split(_ input: [UInt8]) -> (fixChecksums: Bool, data: ArraySlice<UInt8>) {
    guard let mode = input.first else { return (false, input[...]) }
    return (mode & 1 == 1, input.dropFirst())
  }

  /// Every key valid, and the encoding decodes to the same entries.
  private static func checkCatalog(_ entries: [String: WallClockInstant], stamp: DirectoryStamp)
    -> [String]
  {
    var problems: [String] = []
    for key in entries.keys where CacheItemKey.problem(with: key) != nil {
      problems.append("cache index: the invalid key \(CacheItemKey.quoted(key)) was accepted")
    }
    guard problems.isEmpty else { return problems }
    let encoded = DirectoryCacheStore.encodeIndex(CacheCatalog(entries: entries), stamp: stamp)
    let again = DirectoryCacheStore.decodeIndexBody(
      Array(encoded[CacheFormat.indexHeaderSize...]))
    if again != entries {
      problems.append("cache index: a decoded catalog does not decode again after encoding")
    }
    return problems
  }

  /// Runs a decoded record through the mark and floor arithmetic with clocks taken from `data`.
  private static func exercise(_ record: ClockMarkRecord, with data: ArraySlice<UInt8>)
    -> [String]
  {
    var words: [Int64] = []
    var iterator = data.reversed().makeIterator()
    for _ in 0..<3 {
      var value: UInt64 = 0
      for index in 0..<8 { value |= UInt64(iterator.next() ?? 0) << (8 * index) }
      words.append(Int64(bitPattern: value))
    }
    let wall = WallClockInstant(nanosecondsSinceEpoch: words[0])
    let boot = BootClockReading(
      bootID: words[2] & 1 == 0 ? record.floor.anchorBootID : BootID(high: 1, low: 2),
      sinceBoot: .nanoseconds(words[1]))
    let observed = record.observing(ClockObservation(wall: wall, boot: boot))
    var problems: [String] = []
    if observed.mark < record.mark {
      problems.append("mark record: an observation lowered the mark")
    }
    if let policy = try? EligibilityPolicy(maxAge: .nanoseconds(words[2].magnitude >> 1)) {
      let items = (try? ItemTimeSummary(count: 1, oldest: record.mark, newest: record.mark))
      _ = BootClockFloorCheck(
        record: observed, wall: wall, items: items ?? .empty, policy: policy)
    }
    return problems
  }
}
