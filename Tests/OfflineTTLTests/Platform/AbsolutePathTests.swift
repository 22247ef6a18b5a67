import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Absolute paths built from the working directory's bytes: the same spelling as a file URL's
/// standardized path for UTF-8 (the keyring ids made by earlier versions stay), and byte for
/// byte for a working directory that is not UTF-8.
@Suite struct AbsolutePathTests {
  @Test(arguments: [
    "/a/b", "/a/./b/", "/a//b", "/a/b/../c", "/..", "/", "/a/b/..", "s", "./s", "a/../s",
    "é/ü", "../x",
  ])
  func aUTF8PathIsSpeltAsAStandardizedFileURLSpellsIt(_ path: String) throws {
    let expected = URL(fileURLWithPath: path).standardizedFileURL.path
    #expect(try AbsolutePath.lexical(path) == expected)
  }

  @Test func aWorkingDirectoryThatIsNotUTF8KeepsItsBytes() throws {
    let escaped = [UInt8(0xFF)].withUnsafeBytes { FileSystemName.name(fromEntry: $0) }
    let plan = SyscallFaultPlan()
    // The seam's own working directory is read with getcwd; a fault there is a typed error.
    plan.fail(.getcwd, with: .permissionDenied)
    #expect(throws: Errno.permissionDenied) {
      try AbsolutePath.lexical("s", system: Syscalls(faults: plan))
    }
    #expect(
      try AbsolutePath.lexical("/a/" + escaped + "/../" + escaped + "/s") == "/a/\(escaped)/s")
    #expect(
      FileSystemName.bytes(ofPath: try AbsolutePath.lexical("/a/" + escaped + "/s"))
        == Array("/a/".utf8) + [0xFF] + Array("/s".utf8))
  }

  @Test func aPathOfBytesRoundTrips() {
    let bytes: [UInt8] = Array("/run/".utf8) + [0x6C, 0xFF] + Array("/ok/é".utf8)
    let path = FileSystemName.path(fromBytes: bytes)
    #expect(FileSystemName.holdsEscape(path))
    #expect(FileSystemName.bytes(ofPath: path) == bytes)
    #expect(path.hasPrefix("/run/") && path.hasSuffix("/ok/é"))
    let valid = Array("/run/\u{FFFD}/x".utf8)
    #expect(FileSystemName.path(fromBytes: valid) == "/run/\u{FFFD}/x")
    #expect(!FileSystemName.holdsEscape(FileSystemName.path(fromBytes: valid)))
  }

  @Test func aPathThroughASymbolicLinkResolvesToTheRealDirectoryAndKeepsItsLastName() throws {
    let scratch = try TemporaryStoreDirectory()
    defer { scratch.remove() }
    let root = try Syscalls().realPath(scratch.path)
    try FileManager.default.createDirectory(
      atPath: root + "/real/inner", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "real")
    try FileManager.default.createSymbolicLink(
      atPath: root + "/real/last", withDestinationPath: "inner")
    #expect(try AbsolutePath.resolvingLinks(root + "/link/store") == root + "/real/store")
    #expect(try AbsolutePath.resolvingLinks(root + "/link/store/") == root + "/real/store")
    #expect(try AbsolutePath.resolvingLinks(root + "/link/inner/../s") == root + "/real/s")
    #expect(try AbsolutePath.resolvingLinks(root + "/link/.") == root + "/real")
    // The last name is kept, even when it is a link (the store refuses one where it opens it).
    #expect(try AbsolutePath.resolvingLinks(root + "/link/last") == root + "/real/last")
    #expect(throws: Errno.noSuchFileOrDirectory) {
      try AbsolutePath.resolvingLinks(root + "/missing/store")
    }
    #expect(try AbsolutePath.resolvingLinks("/") == "/")
  }
}
