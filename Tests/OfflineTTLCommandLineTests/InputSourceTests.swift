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
