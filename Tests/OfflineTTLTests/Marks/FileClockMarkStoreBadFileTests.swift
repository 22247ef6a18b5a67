import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// A bad file in place of the record, and the unreadable reason it must give.
struct BadFile: CustomTestStringConvertible, Sendable {
  let name: String
  let reason: ClockMarkStoreError.UnreadableReason
  /// Makes the bad file, given a directory holding a valid record.
  let make: @Sendable (StoreFiles) throws -> Void

  var testDescription: String { name }

  static func bytes(
    _ name: String, _ reason: ClockMarkStoreError.UnreadableReason,
    _ transform: @escaping @Sendable ([UInt8]) -> [UInt8]
  ) -> BadFile {
    BadFile(name: name, reason: reason) { files in
      try files.overwrite(transform(try files.recordBytes()))
    }
  }

  static let all: [BadFile] = [
    bytes("0 bytes", .empty) { _ in [] },
    bytes("all NULs", .badChecksum) { _ in [UInt8](repeating: 0, count: 8192) },
    bytes("random bytes", .badChecksum) { _ in (0..<8192).map { _ in UInt8.random(in: 0...255) } },
    bytes("truncated by one byte", .truncated) { Array($0.dropLast()) },
    bytes("one extra byte", .oversized) { $0 + [0] },
    bytes("a flipped bit in both slots", .badChecksum) { bytes in
      var bytes = bytes
      bytes[27] ^= 0x01
      bytes[4096 + 27] ^= 0x01
      return bytes
    },
    bytes("unknown version", .unknownVersion) { bytes in
      var bytes = bytes
      for offset in [0, 4096] {
        bytes[offset + 4] = 9
        // The slot's own length (128, or 256 for a record bound to this machine).
        let end = offset + Int(bytes[offset + 6]) + Int(bytes[offset + 7]) << 8 - 4
        let crc = MarkRecordCodec.checksum(bytes[offset..<end])
        for index in 0..<4 {
          bytes[end + index] = UInt8(truncatingIfNeeded: crc >> (8 * index))
        }
      }
      return bytes
    },
    BadFile(name: "1 GiB sparse file", reason: .oversized) { files in
      let handle = try #require(FileHandle(forWritingAtPath: files.recordPath))
      try handle.truncate(atOffset: 1 << 30)
      try handle.close()
    },
    BadFile(name: "symbolic link", reason: .symbolicLink) { files in
      let target = files.dir.appending("elsewhere")
      try FileManager.default.moveItem(atPath: files.recordPath, toPath: target)
      try FileManager.default.createSymbolicLink(
        atPath: files.recordPath, withDestinationPath: target)
    },
    BadFile(name: "directory", reason: .notRegularFile) { files in
      try FileManager.default.removeItem(atPath: files.recordPath)
      try FileManager.default.createDirectory(
        atPath: files.recordPath, withIntermediateDirectories: false,
        attributes: [.posixPermissions: 0o700])
    },
    // A mode that lets group or others read the record is `insecure_store`, not unreadable:
    // UnrepairableStoreTests.aRecordOthersMayReadOrWriteIsInsecureAndTheResetReplacesIt.
    BadFile(name: "FIFO", reason: .notRegularFile) { files in
      try FileManager.default.removeItem(atPath: files.recordPath)
      #expect(mkfifo(files.recordPath, 0o600) == 0)
    },
    // A socket cannot be opened at all (`ENXIO`): the same reason as a FIFO, not `io`.
    BadFile(name: "socket", reason: .notRegularFile) { files in
      try FileManager.default.removeItem(atPath: files.recordPath)
      try UnixSocket.place(at: files.recordPath)
    },
  ]
}

/// What is on disk at the record's name, compared without following links or reading 1 GiB.
struct Snapshot: Equatable {
  let type: FileAttributeType?
  let mode: Int?
  let size: UInt64?
  let modified: Date?
  let bytes: [UInt8]?
  let linkTarget: String?

  init(_ path: String) {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    type = attributes?[.type] as? FileAttributeType
    mode = attributes?[.posixPermissions] as? Int
    size = (attributes?[.size] as? NSNumber)?.uint64Value
    modified = attributes?[.modificationDate] as? Date
    linkTarget = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    bytes =
      type == .typeRegular && (size ?? 0) <= 65_536
      ? (try? Data(contentsOf: URL(fileURLWithPath: path))).map(Array.init) : nil
  }
}

@Suite struct FileClockMarkStoreBadFileTests {
  @Test(arguments: BadFile.all)
  func isTypedUnreadableAndLeftExactlyAsItWas(bad: BadFile) throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(1_000))
    try bad.make(files)
    let before = Snapshot(files.recordPath)
    let plan = SyscallFaultPlan()
    let store = FileClockMarkStore(atPath: dir.path, faults: plan)
    let operations: [(String, () throws(ClockMarkStoreError) -> Void)] = [
      ("read", { () throws(ClockMarkStoreError) in _ = try store.read() }),
      ("observe", { () throws(ClockMarkStoreError) in _ = try store.observe(now: instant(2_000)) }),
      (
        "createFirstMark",
        { () throws(ClockMarkStoreError) in _ = try store.createFirstMark(now: instant(3)) }
      ),
    ]
    for (name, operation) in operations {
      // A FIFO in the record's place must never be waited on: a watchdog opens its other end
      // after 60 s and the wait is a failure naming the operation.
      neverWaitingOn([files.recordPath], "\(name) on \(bad.name)") {
        do throws(ClockMarkStoreError) {
          try operation()
          Issue.record("\(name) succeeded on \(bad.name)")
        } catch {
          #expect(error.code == .unreadable, "\(name): \(error)")
          #expect(error.unreadableReason == bad.reason, "\(name): \(error)")
        }
      }
      #expect(Snapshot(files.recordPath) == before, "\(name) left the bytes alone")
    }
    if bad.reason == .oversized || bad.reason == .empty || bad.reason == .truncated {
      #expect(plan.count(of: .pread) == 0, "a file of the wrong size is judged from fstat alone")
    }
    #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .renameat) == 0, "nothing written")
  }

  @Test(arguments: BadFile.all)
  func onlyResetReplacesIt(bad: BadFile) throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(1_000))
    try bad.make(files)
    let elsewhere = Snapshot(dir.appending("elsewhere"))
    do {
      let record = try neverWaitingOn([files.recordPath], "the reset over \(bad.name)") {
        try files.store.resetAfterOnlineSignIn(now: instant(5))
      }
      // The online reset replaces whatever stands in the record's place (a directory too).
      #expect(record.mark == instant(5))
      #expect(try files.store.read() == record)
      #expect(try files.mode(files.recordPath) == 0o600)
      #expect(Snapshot(dir.appending("elsewhere")) == elsewhere, "a link's target is untouched")
    } catch let error as ClockMarkStoreError {
      Issue.record("an online reset did not recover from \(bad.name): \(error)")
    }
  }
}
