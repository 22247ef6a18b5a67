import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct ClockMarkStoreConformanceTests {
  @Test func inMemoryStoreConforms() throws {
    try ClockMarkStoreConformance.run(
      ClockMarkStoreConformance.Backend(
        makeEmpty: { InMemoryClockMarkStore() },
        corrupt: { store in
          (store as! InMemoryClockMarkStore).setStored(.unreadable(.badChecksum))
        }))
  }

  @Test func fileStoreConforms() throws {
    try ClockMarkStoreConformance.run(
      ClockMarkStoreConformance.Backend(
        makeEmpty: {
          FileClockMarkStore(atPath: try TemporaryStoreDirectory(prefix: "conformance").path)
        },
        reopen: { store in
          FileClockMarkStore(atPath: (store as! FileClockMarkStore).directoryPath)
        },
        corrupt: { store in
          let path =
            (store as! FileClockMarkStore).directoryPath + "/" + FileClockMarkStore.recordFileName
          let handle = try #require(FileHandle(forWritingAtPath: path))
          try handle.write(
            contentsOf: Data(repeating: 0xEE, count: FileClockMarkStore.recordFileSize))
          try handle.close()
        },
        cleanUp: { store in
          try? FileManager.default.removeItem(atPath: (store as! FileClockMarkStore).directoryPath)
        }))
  }
}
