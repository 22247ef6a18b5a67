import Foundation
import Testing

@testable import OfflineTTLCommandLine

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct InputSourceTests {
  func lines(_ source: InputSource) -> [String] {
    var result: [String] = []
    while let line = source.readLine() { result.append(line) }
    return result
  }

  @Test func splitsOnNewlinesDropsCarriageReturnsAndKeepsALastUnterminatedLine() {
    #expect(lines(InputSource(text: "a\r\n\nb\nc")) == ["a", "", "b", "c"])
    #expect(lines(InputSource(text: "a\n")) == ["a"])
    #expect(lines(InputSource(text: "")) == [])
  }

  @Test func readsLinesLongerThanOneChunkFromAFileDescriptor() throws {
    let long = String(repeating: "x", count: 200_000)
    let reader = try pipeFedInTheBackground("first\n\(long)\nlast")
    let source = InputSource(fileDescriptor: reader)
    let read = lines(source)
    close(reader)
    #expect(read == ["first", long, "last"])
    #expect(source.readError == nil)
  }
}

@Suite struct InputSourceLineLimitTests {
  @Test func aLineOverTheLimitIsSkippedToItsNewlineAndHandedOutEmpty() throws {
    let reader = try pipeFedInTheBackground(
      "short\n" + String(repeating: "y", count: 300_000) + "\nafter\n"
        + String(repeating: "z", count: 300_000))
    let source = InputSource(fileDescriptor: reader, maximumLineLength: 100_000)
    var lines: [(String, Bool)] = []
    while let line = source.readLine() { lines.append((line, source.lastLineWasCut)) }
    close(reader)
    #expect(lines.map(\.0) == ["short", "", "after", ""])
    #expect(lines.map(\.1) == [false, true, false, true])
  }
}

/// The limit is exact: a line of exactly `maximumLineLength` bytes (not counting its `\n`, or a
/// `\r` before it) is handed out, one byte more is cut, wherever the line's end falls: in the
/// chunk that holds its start, chunks later, or at the end of the input without a newline.
@Suite struct InputSourceExactLimitTests {
  static let limit = 100_000

  /// Reads `text` through a pipe with the test's limit: each line with whether it was cut.
  func read(_ text: String) throws -> [(length: Int, cut: Bool)] {
    let reader = try pipeFedInTheBackground(text)
    defer { close(reader) }
    let source = InputSource(fileDescriptor: reader, maximumLineLength: Self.limit)
    var lines: [(Int, Bool)] = []
    while let line = source.readLine() { lines.append((line.utf8.count, source.lastLineWasCut)) }
    #expect(source.readError == nil)
    return lines
  }

  /// (bytes before the line, so that its end falls elsewhere in a chunk; the line ending).
  @Test(arguments: [0, 1, 4_095, 31_071, 65_535], ["\n", "\r\n", ""])
  func aLineAtTheLimitIsKeptAndOneByteOverIsCut(_ lead: Int, _ ending: String) throws {
    let first = String(repeating: "a", count: max(lead, 1))
    for (length, cut) in [(Self.limit, false), (Self.limit + 1, true), (Self.limit - 1, false)] {
      let line = String(repeating: "x", count: length)
      let lines = try read(first + "\n" + line + ending)
      let label = "lead \(lead), length \(length), ending \(ending.debugDescription)"
      #expect(lines.count == 2, "\(label)")
      #expect(lines.last?.cut == cut, "\(label)")
      #expect(lines.last?.length == (cut ? 0 : length), "\(label)")
    }
  }

  /// The default is 16 MiB exactly: 16,777,216 bytes kept, 16,777,217 cut.
  @Test func theDefaultLimitIsSixteenMebibytes() throws {
    #expect(InputSource(fileDescriptor: 0).maximumLineLength == 16 * 1024 * 1024)
    let kept = String(repeating: "x", count: 1 << 24)
    let reader = try pipeFedInTheBackground(kept + "\n" + kept + "y\nz")
    defer { close(reader) }
    let source = InputSource(fileDescriptor: reader)
    var lines: [(Int, Bool)] = []
    while let line = source.readLine() { lines.append((line.utf8.count, source.lastLineWasCut)) }
    #expect(lines.map(\.0) == [1 << 24, 0, 1])
    #expect(lines.map(\.1) == [false, true, false])
  }
}

/// The read end of a new pipe that another thread fills with `text`, then closes: the pipe
/// buffer is smaller than the texts these tests read, so the writer must not be the reader.
private func pipeFedInTheBackground(_ text: String) throws -> Int32 {
  var fds: [Int32] = [0, 0]
  try #require(pipe(&fds) == 0)
  let writer = fds[1]
  let thread = Thread { [text] in
    var text = text
    text.withUTF8 { _ = FileDescriptorCalls.writeAll(writer, UnsafeRawBufferPointer($0)) }
    close(writer)
  }
  thread.start()
  return fds[0]
}
