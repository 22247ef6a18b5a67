import Testing

@testable import OfflineTTLCommandLine

@Suite struct OutputSinkTests {
  @Test func capturesTextBytesAndLinesInOrder() {
    let sink = OutputSink()
    sink.write("a")
    sink.write(byte: UInt8(ascii: "b"))
    sink.write(bytes: [UInt8(ascii: "c")])
    sink.writeLine("d")
    #expect(sink.capturedText == "abcd\n")
    #expect(!sink.writeFailed)
  }

  @Test func aFailedWriteIsRememberedNotFatal() {
    let sink = OutputSink(fileDescriptor: -1)
    sink.write("lost")
    sink.flush()
    #expect(sink.writeFailed)
  }
}
