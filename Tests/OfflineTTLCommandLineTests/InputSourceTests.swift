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
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let long = String(repeating: "x", count: 200_000)
    let text = "first\n\(long)\nlast"
    // Write from another thread: the pipe buffer is smaller than the text.
    let writer = fds[1]
    let thread = Thread { [text] in
      var text = text
      text.withUTF8 { _ = FileDescriptorCalls.writeAll(writer, UnsafeRawBufferPointer($0)) }
      close(writer)
    }
    thread.start()
    let source = InputSource(fileDescriptor: fds[0])
    let read = lines(source)
    close(fds[0])
    #expect(read == ["first", long, "last"])
    #expect(source.readError == nil)
  }
}

@Suite struct InputSourceLineLimitTests {
  @Test func aLineOverTheLimitIsSkippedToItsNewlineAndHandedOutEmpty() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let text =
      "short\n" + String(repeating: "y", count: 300_000) + "\nafter\n"
      + String(repeating: "z", count: 300_000)
    let writer = fds[1]
    let thread = Thread { [text] in
      var text = text
      text.withUTF8 { _ = FileDescriptorCalls.writeAll(writer, UnsafeRawBufferPointer($0)) }
      close(writer)
    }
    thread.start()
    let source = InputSource(fileDescriptor: fds[0], maximumLineLength: 100_000)
    var lines: [(String, Bool)] = []
    while let line = source.readLine() { lines.append((line, source.lastLineWasCut)) }
    close(fds[0])
    #expect(lines.map(\.0) == ["short", "", "after", ""])
    #expect(lines.map(\.1) == [false, true, false, true])
  }
}
