import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct LinuxBootClockTests {
  #if os(Linux)
    @Test func readsTheKernelsBootIDAndAMovingBootClock() throws {
      let clock = LinuxBootClock()
      let first = try #require(clock.now())
      let second = try #require(clock.now())
      let text = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
      #expect(first.bootID == BootID(uuidString: text))
      #expect(first.bootID != .none)
      #expect(first.sinceBoot > .zero)
      #expect(second.sinceBoot >= first.sinceBoot)
      #expect(second.bootID == first.bootID)
    }

    @Test func unreadableOrMalformedBootIDGivesNoReading() throws {
      let scratch = try TemporaryStoreDirectory(prefix: "linux-boot-clock")
      defer { scratch.remove() }
      let directory = URL(fileURLWithPath: scratch.path)
      let missing = directory.appendingPathComponent("missing").path
      #expect(LinuxBootClock(bootIDPath: missing).now() == nil)
      for (name, text) in [("zero", "00000000-0000-0000-0000-000000000000\n"), ("bad", "hello\n")] {
        let path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(LinuxBootClock(bootIDPath: path).now() == nil, "\(name)")
      }
      let good = directory.appendingPathComponent("good").path
      try Data("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n".utf8).write(to: URL(fileURLWithPath: good))
      #expect(LinuxBootClock(bootIDPath: good).now()?.bootID.low == 0x8796_a5b4_c3d2_e1f0)
    }
  #else
    @Test func givesNoReadingOffLinux() {
      #expect(LinuxBootClock().now() == nil)
    }
  #endif
}
