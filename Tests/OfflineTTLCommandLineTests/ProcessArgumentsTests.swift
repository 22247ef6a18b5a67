import Foundation
import OfflineTTLCommandLine
import Testing

@Suite struct ProcessArgumentsTests {
  @Test func areCommandLineArgumentsWhenThoseAreKnown() {
    #expect(!CommandLine.arguments.isEmpty)
    #expect(ProcessArguments.current() == CommandLine.arguments)
  }

  @Test func procCmdlineHoldsTheSameArgumentsOnLinux() throws {
    guard let data = FileManager.default.contents(atPath: "/proc/self/cmdline") else { return }
    let parts = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    #expect(parts == CommandLine.arguments)
  }
}
