/// A buffered byte stream for standard output or standard error, or an in-memory capture for
/// tests. Not thread-safe: one subcommand writes from one thread.
final class OutputSink {
  private let fileDescriptor: Int32?
  private var buffer: [UInt8] = []
  private(set) var writeFailed = false
  /// Everything written so far, when capturing to memory; unused for a file descriptor.
  private(set) var captured: [UInt8] = []

  private static let flushThreshold = 1 << 16

  /// A sink that writes to `fileDescriptor`, buffered until ``flush()`` or 64 KiB.
  init(fileDescriptor: Int32) {
    self.fileDescriptor = fileDescriptor
    buffer.reserveCapacity(Self.flushThreshold)
  }

  /// A sink that keeps everything in memory (``captured``).
  init() {
    self.fileDescriptor = nil
  }

  /// The captured bytes as UTF-8 text.
  var capturedText: String { String(decoding: captured, as: UTF8.self) }

  /// Appends text.
  func write(_ text: String) {
    var text = text
    text.withUTF8 { write(bytes: $0) }
  }

  /// Appends text followed by a newline.
  func writeLine(_ text: String) {
    write(text)
    write(byte: UInt8(ascii: "\n"))
  }

  /// Appends `error: <message>` and a newline, the message escaped for a terminal
  /// (``TerminalText/escaped(_:)``): what it quotes cannot forge a line or reverse the text.
  func writeError(_ message: String) {
    writeLine("error: " + TerminalText.escaped(message))
  }

  /// Appends `warning: <message>` and a newline, escaped as ``writeError(_:)`` escapes: for a
  /// command that succeeded with something its user must know.
  func writeWarning(_ message: String) {
    writeLine("warning: " + TerminalText.escaped(message))
  }

  /// Appends one byte.
  func write(byte: UInt8) {
    guard fileDescriptor != nil else {
      captured.append(byte)
      return
    }
    buffer.append(byte)
    if buffer.count >= Self.flushThreshold { flush() }
  }

  /// Appends raw bytes.
  func write<C: Collection>(bytes: C) where C.Element == UInt8 {
    guard fileDescriptor != nil else {
      captured.append(contentsOf: bytes)
      return
    }
    buffer.append(contentsOf: bytes)
    if buffer.count >= Self.flushThreshold { flush() }
  }

  /// Writes `bytes` at once, after whatever is buffered, without copying them into the buffer
  /// (for large payloads streamed chunk by chunk). A failed write is remembered in
  /// ``writeFailed``; after one, nothing more is written.
  func writeUnbuffered(_ bytes: UnsafeRawBufferPointer) {
    guard let fileDescriptor else {
      captured.append(contentsOf: bytes)
      return
    }
    flush()
    guard !writeFailed, !bytes.isEmpty else { return }
    if FileDescriptorCalls.writeAll(fileDescriptor, bytes) != nil { writeFailed = true }
  }

  /// Writes the buffered bytes out. A failed write is remembered in ``writeFailed`` and the
  /// bytes are dropped (a closed pipe must not hang the tool).
  func flush() {
    guard let fileDescriptor, !buffer.isEmpty else { return }
    let failure = buffer.withUnsafeBytes { FileDescriptorCalls.writeAll(fileDescriptor, $0) }
    if failure != nil { writeFailed = true }
    buffer.removeAll(keepingCapacity: true)
  }
}
