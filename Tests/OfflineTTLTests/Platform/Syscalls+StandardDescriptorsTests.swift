#if canImport(Glibc)
  import Foundation
  import Glibc
  import OfflineTTLTesting
  import Testing

  @_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

  /// The seam never hands out a standard descriptor: one that comes back below the lowest
  /// allowed is moved above it, and `/dev/null`, read-only, holds its number. The test passes a
  /// `lowest` just above a descriptor of its own (the test process's 0, 1 and 2 stay untouched);
  /// the command line's end-to-end tests close the real ones.
  @Suite struct SyscallsStandardDescriptorsTests {
    static func status(_ fd: Int32) -> stat? {
      var buffer = stat()
      return fstat(fd, &buffer) == 0 ? buffer : nil
    }

    @Test func aDescriptorBelowTheLowestIsMovedAndDevNullHoldsItsNumber() throws {
      let dir = try TemporaryStoreDirectory()
      defer { dir.remove() }
      let path = dir.appending("record")
      let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      try #require(fd >= 0)
      #expect(write(fd, "abc", 3) == 3)
      let moved = try Syscalls.movedAbove(fd, lowest: fd + 1)
      defer {
        close(moved)
        close(fd)
      }
      #expect(moved > fd)
      #expect(fcntl(moved, F_GETFD) & FD_CLOEXEC != 0, "the moved descriptor is close-on-exec")
      // The moved descriptor is the file.
      let file = try #require(Self.status(moved))
      var named = stat()
      try #require(lstat(path, &named) == 0)
      #expect(file.st_ino == named.st_ino && file.st_dev == named.st_dev)
      var back = [UInt8](repeating: 0, count: 3)
      #expect(pread(moved, &back, 3, 0) == 3)
      #expect(back == Array("abc".utf8))
      // Its old number is /dev/null, read-only: a write there fails and reaches no file.
      let null = try #require(Self.status(fd))
      var device = stat()
      try #require(stat("/dev/null", &device) == 0)
      #expect(null.st_mode & S_IFMT == S_IFCHR && null.st_rdev == device.st_rdev)
      errno = 0
      #expect(write(fd, "xyz", 3) == -1)
      #expect(errno == EBADF)
      #expect(pread(moved, &back, 3, 0) == 3)
      #expect(back == Array("abc".utf8), "the file is unchanged")
    }

    @Test func aDescriptorAtOrAboveTheLowestIsKept() throws {
      let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
      try #require(fd >= 0)
      defer { close(fd) }
      #expect(try Syscalls.movedAbove(fd, lowest: fd) == fd)
      #expect(try Syscalls.movedAbove(fd, lowest: 3) == fd)
    }

    @Test func everyDescriptorOfTheSeamIsAboveTheStandardOnes() throws {
      let dir = try TemporaryStoreDirectory()
      defer { dir.remove() }
      let system = Syscalls()
      let fd = try system.open(dir.appending("f"), [.readWrite, .create, .exclusive], mode: 0o600)
      defer { system.closeIgnoringErrors(fd) }
      #expect(fd.rawValue > 2)
    }
  }
#endif
