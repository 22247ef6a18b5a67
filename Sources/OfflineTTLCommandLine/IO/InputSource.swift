#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Standard input read line by line without Foundation, or in-memory bytes for tests.
final class InputSource {
  private let fileDescriptor: Int32?
  private var buffer: [UInt8]
  private var chunk: [UInt8] = []
  private var start = 0
  private var atEnd = false
  /// `errno` of a failed read, if any; reading stops there.
  private(set) var readError: Int32?
  /// The longest line kept, in bytes, not counting its `\n` or a `\r` before it: a line of
  /// exactly this length is handed out, one byte longer is skipped (see ``lastLineWasCut``).
  /// At most this + 64 KiB + 1 bytes are buffered.
  let maximumLineLength: Int
  /// Whether the line last handed out was longer than ``maximumLineLength``: it was skipped to
  /// its newline and handed out empty, so memory stays bounded on endless input.
  private(set) var lastLineWasCut = false

  private static let chunkSize = 1 << 16

  /// Reads from `fileDescriptor` in 64 KiB chunks.
  ///
  /// - Parameters:
  ///   - fileDescriptor: The descriptor to read; not closed here.
  ///   - maximumLineLength: The longest line kept, 16 MiB (16,777,216 bytes) by default.
  init(fileDescriptor: Int32, maximumLineLength: Int = 1 << 24) {
    self.fileDescriptor = fileDescriptor
    self.buffer = []
    self.maximumLineLength = maximumLineLength
  }

  /// Reads from the given bytes.
  init<C: Collection>(bytes: C) where C.Element == UInt8 {
    self.fileDescriptor = nil
    self.buffer = Array(bytes)
    self.atEnd = true
    self.maximumLineLength = .max
  }

  /// Reads from the given text's UTF-8.
  convenience init(text: String) {
    self.init(bytes: Array(text.utf8))
  }

  /// The next line without its `\n` (and without a `\r` before it), or `nil` at end of input.
  /// A last line without a newline is returned too. A line longer than ``maximumLineLength``
  /// is handed out empty with ``lastLineWasCut`` set.
  ///
  /// - Parameter body: Called with the line's bytes; the buffer is valid only during the call.
  /// - Returns: `body`'s result, or `nil` at end of input.
  func withNextLine<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
    var searchFrom = start
    lastLineWasCut = false
    while true {
      let newline = buffer.withUnsafeBufferPointer { all -> Int? in
        guard searchFrom < all.count, let base = all.baseAddress,
          let found = memchr(base + searchFrom, 0x0A, all.count - searchFrom)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      }
      if let newline, lastLineWasCut {
        start = newline + 1
        return try body(UnsafeBufferPointer(start: nil, count: 0))
      }
      if let newline {
        let lineStart = start
        start = newline + 1
        return try lineBody(from: lineStart, to: newline, body)
      }
      if atEnd, lastLineWasCut {
        start = buffer.count
        return try body(UnsafeBufferPointer(start: nil, count: 0))
      }
      if atEnd {
        guard start < buffer.count else { return nil }
        let lineStart = start
        start = buffer.count
        return try lineBody(from: lineStart, to: buffer.count, body)
      }
      // One byte more than the limit may be a `\r` that the newline after it drops.
      if buffer.count - start - 1 > maximumLineLength {
        // Too long to keep: drop what is buffered and skip to the next newline.
        lastLineWasCut = true
        buffer.removeAll(keepingCapacity: true)
        start = 0
        searchFrom = 0
        refill()
        continue
      }
      let searched = buffer.count - start
      refill()
      searchFrom = start + searched
    }
  }

  /// The next line as a `String`, or `nil` at end of input.
  func readLine() -> String? {
    withNextLine { String(decoding: $0, as: UTF8.self) }
  }

  private func lineBody<R>(
    from lineStart: Int, to lineEnd: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R
  ) rethrows -> R {
    var end = lineEnd
    if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
    // The limit is the line's own length, whichever read brought its end: a longer line read
    // whole (its newline in the same chunk, or the last line of the input) is cut too.
    if end - lineStart > maximumLineLength {
      lastLineWasCut = true
      return try body(UnsafeBufferPointer(start: nil, count: 0))
    }
    return try buffer.withUnsafeBufferPointer {
      try body(UnsafeBufferPointer(rebasing: $0[lineStart..<end]))
    }
  }

  private func refill() {
    guard let fileDescriptor else {
      atEnd = true
      return
    }
    if start > 0 {
      buffer.removeFirst(start)
      start = 0
    }
    if chunk.isEmpty { chunk = [UInt8](repeating: 0, count: Self.chunkSize) }
    let count = chunk.withUnsafeMutableBytes { FileDescriptorCalls.read(fileDescriptor, into: $0) }
    if count > 0 {
      chunk.withUnsafeBufferPointer {
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count]))
      }
    }
    if count < 0 { readError = Int32(-count) }
    if count <= 0 { atEnd = true }
  }
}
