import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct SyscallsTests {
  let system = Syscalls()

  @Test func writesAndReadsBackAFileThroughTheSeam() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let fd = try system.open(dir.appending("f"), [.readWrite, .create, .exclusive], mode: 0o600)
    let bytes: [UInt8] = [1, 2, 3, 4, 5]
    try bytes.withUnsafeBytes { buffer in try system.pwriteAll(fd, buffer, at: 10) }
    try system.fdatasync(fd)
    let status = try system.fstat(fd)
    #expect(status.kind == .regular)
    #expect(status.size == 15)
    #expect(status.permissions == 0o600)
    var back = [UInt8](repeating: 0, count: 8)
    let count = try back.withUnsafeMutableBytes { buffer in
      try system.preadAll(fd, into: buffer, at: 10)
    }
    #expect(count == 5)
    #expect(Array(back[0..<5]) == bytes)
    try system.close(fd)
  }

  @Test func neverFollowsASymbolicLinkAsTheLastComponent() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    _ = FileManager.default.createFile(atPath: dir.appending("target"), contents: Data([7]))
    try FileManager.default.createSymbolicLink(
      atPath: dir.appending("link"), withDestinationPath: dir.appending("target"))
    #expect(throws: Errno.tooManySymbolicLinks) {
      _ = try system.open(dir.appending("link"), .readOnly)
    }
    let status = try system.lstat(dir.appending("link"))
    #expect(status.kind == .symbolicLink)
  }

  @Test func openatRenameatAndUnlinkatWorkRelativeToADirectory() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let dirFD = try system.open(dir.path, [.readOnly, .directory])
    defer { system.closeIgnoringErrors(dirFD) }
    let fd = try system.openat(dirFD, "a", [.writeOnly, .create, .exclusive], mode: 0o600)
    try system.close(fd)
    try system.renameat(dirFD, "a", to: "b")
    #expect(throws: Errno.noSuchFileOrDirectory) { _ = try system.fstatat(dirFD, "a") }
    #expect(try system.fstatat(dirFD, "b").kind == .regular)
    try system.unlinkat(dirFD, "b")
    #expect(throws: Errno.noSuchFileOrDirectory) { _ = try system.fstatat(dirFD, "b") }
    try system.mkdirat(dirFD, "sub", mode: 0o700)
    #expect(try system.fstatat(dirFD, "sub").kind == .directory)
  }

  @Test func flockOnSeparateDescriptionsExcludesEachOtherInOneProcess() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let first = try system.open(dir.appending("lock"), [.readWrite, .create], mode: 0o600)
    let second = try system.open(dir.appending("lock"), [.readWrite])
    defer {
      system.closeIgnoringErrors(first)
      system.closeIgnoringErrors(second)
    }
    try system.flock(first, .exclusive)
    #expect(throws: Errno.wouldBlock) {
      try system.flock(second, LockOperation.exclusive.nonBlocking)
    }
    try system.flock(first, .unlock)
    try system.flock(second, LockOperation.exclusive.nonBlocking)
  }

  @Test func errnoNamesItself() {
    #expect(Errno.ioError.name == "EIO")
    #expect(Errno.noSpace.description.hasPrefix("ENOSPC ("))
    #expect(Errno(rawValue: 9999).name == "errno 9999")
  }
}

@Suite struct SyscallsPathTests {
  let system = Syscalls()

  @Test func writeReadTruncateChmodRenameAndUnlinkByPath() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    try system.mkdir(dir.appending("d"), mode: 0o700)
    #expect(throws: Errno.fileExists) { try system.mkdir(dir.appending("d"), mode: 0o700) }
    let path = dir.appending("d/f")
    let fd = try system.open(path, [.readWrite, .create, .exclusive], mode: 0o600)
    try system.writeAll(fd, bytes: [UInt8](repeating: 7, count: 10)[...])
    try system.ftruncate(fd, to: 4)
    try system.fchmod(fd, mode: 0o640)
    let status = try system.fstat(fd)
    #expect(status.size == 4)
    #expect(status.permissions == 0o640)
    #expect(status.isAccessibleByOthers)
    try system.close(fd)
    let reader = try system.open(path, .readOnly)
    var bytes = [UInt8](repeating: 0, count: 8)
    let count = try bytes.withUnsafeMutableBytes { try system.read(reader, into: $0) }
    #expect(count == 4)
    #expect(Array(bytes[0..<4]) == [7, 7, 7, 7])
    try system.close(reader)
    try system.rename(path, to: dir.appending("d/g"))
    #expect(try system.lstat(dir.appending("d/g")).kind == .regular)
    try system.unlink(dir.appending("d/g"))
    #expect(throws: Errno.noSuchFileOrDirectory) { _ = try system.lstat(dir.appending("d/g")) }
    #expect(throws: Errno.fileExists) {
      _ = try system.open(dir.appending("d"), [.readWrite, .create, .exclusive], mode: 0o600)
    }
  }
}
