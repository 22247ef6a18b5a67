import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

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

    /// The boot id is a file of the system, not of a store: whatever stands in its place that
    /// is not a regular file (a FIFO, a socket, a directory, a symbolic link, or a file larger
    /// than any id) reads as no boot clock, at once: nothing is waited on.
    @Test func aBootIDThatIsNotARegularFileGivesNoReadingWithoutWaiting() throws {
      let scratch = try TemporaryStoreDirectory(prefix: "linux-boot-clock-kinds")
      defer { scratch.remove() }
      let good = scratch.appending("good")
      try Data("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n".utf8).write(to: URL(fileURLWithPath: good))
      let fifo = scratch.appending("fifo")
      try #require(mkfifo(fifo, 0o600) == 0)
      let socketPath = scratch.appending("socket")
      let socketFD = try UnixSocket.bind(at: socketPath)
      defer { close(socketFD) }
      let directory = scratch.appending("directory")
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
      let link = scratch.appending("link")
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
      let large = scratch.appending("large")
      try Data(("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n" + String(repeating: " ", count: 200)).utf8)
        .write(to: URL(fileURLWithPath: large))
      #expect(LinuxBootClock(bootIDPath: good).now() != nil, "the control reads")
      for (name, path) in [
        ("FIFO", fifo), ("socket", socketPath), ("directory", directory),
        ("symbolic link", link), ("oversized file", large),
      ] {
        neverWaitingOn([fifo], bound: .seconds(20), "the boot id's \(name) was waited on") {
          #expect(LinuxBootClock(bootIDPath: path).now() == nil, "\(name)")
        }
      }
    }
  #else
    @Test func givesNoReadingOffLinux() {
      #expect(LinuxBootClock().now() == nil)
    }
  #endif
}
