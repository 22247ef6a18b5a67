import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `link(2)`: gives `existing` the second name `new`; 0 on success.
func hardLink(_ existing: String, _ new: String) -> Int32 {
  link(existing, new)
}

/// The secure open's check that a store file has one name: a file hard-linked into the store or
/// out of it is refused on its descriptor (nothing read or written through it), and only the
/// online path replaces it, leaving the other name's bytes as they were.
@Suite struct SecureStoreFilesTests {
  /// A private directory holding `store/` (opened as a ``StoreDirectory``) and `outside/`.
  struct Scratch {
    let parent: TemporaryStoreDirectory
    let directory: StoreDirectory
    let secure = SecureStoreFiles()

    init() throws {
      parent = try TemporaryStoreDirectory(prefix: "secure-open")
      try FileManager.default.createDirectory(
        atPath: parent.appending("outside"), withIntermediateDirectories: true)
      directory = try secure.openDirectory(atPath: parent.appending("store"), creating: true)
    }

    func store(_ name: String) -> String { parent.appending("store/" + name) }
    func outside(_ name: String) -> String { parent.appending("outside/" + name) }

    /// Writes `bytes` to `store/<name>` (mode 0600).
    func write(_ name: String, _ bytes: String) throws {
      try Data(bytes.utf8).write(to: URL(fileURLWithPath: store(name)))
      try #require(chmod(store(name), 0o600) == 0)
    }

    func remove() {
      secure.close(directory)
      parent.remove()
    }
  }

  static func linkCount(_ path: String) -> UInt64? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return UInt64(info.st_nlink)
  }

  static func inode(_ path: String) -> UInt64? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return UInt64(info.st_ino)
  }

  static func contents(_ path: String) -> String? {
    (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Which direction the second name was made in.
  enum Direction: String, CaseIterable, Sendable {
    /// A file outside the store linked in under the store's name (`ln -f outside store/f`).
    case linkedIn
    /// The store's file given a name outside the store (`ln store/f outside/f`).
    case linkedOut
  }

  /// Gives `store/<name>` a second name in `outside/` in the given direction; returns the
  /// outside path.
  static func link(_ scratch: Scratch, _ name: String, _ direction: Direction) throws -> String {
    let outside = scratch.outside(name)
    switch direction {
    case .linkedIn:
      try Data("outside bytes".utf8).write(to: URL(fileURLWithPath: outside))
      try #require(chmod(outside, 0o600) == 0)
      _ = unlink(scratch.store(name))
      try #require(hardLink(outside, scratch.store(name)) == 0, "link: \(errno)")
    case .linkedOut:
      try #require(hardLink(scratch.store(name), outside) == 0, "link: \(errno)")
    }
    return outside
  }

  static let accesses: [String] = ["read-only", "read-write", "read-write, create"]

  static func flags(_ access: String) -> OpenFlags {
    switch access {
    case "read-only": .readOnly
    case "read-write": .readWrite
    default: [.readWrite, .create]
    }
  }

  @Test(arguments: Direction.allCases, accesses)
  func aFileWithASecondNameIsRefusedOnItsDescriptor(_ direction: Direction, _ access: String)
    throws
  {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("record", "store bytes")
    let outside = try Self.link(scratch, "record", direction)
    let before = Self.contents(outside)
    #expect(throws: StoreFileError(.hardLinked(linkCount: 2), path: scratch.store("record"))) {
      _ = try scratch.secure.openFile("record", in: scratch.directory, Self.flags(access))
    }
    let error = StoreFileError(.hardLinked(linkCount: 2), path: scratch.store("record"))
    #expect(error.isInsecure && error.isHardLinked && !error.isWrongType)
    #expect(error.description.contains(scratch.store("record")), "names the path")
    #expect(error.description.contains("2 names"))
    #expect(Self.contents(outside) == before)
    #expect(Self.linkCount(outside) == 2, "the offline open removed nothing")
  }

  @Test func threeNamesAreCountedInTheError() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("index", "x")
    _ = try Self.link(scratch, "index", .linkedOut)
    try #require(hardLink(scratch.store("index"), scratch.outside("again")) == 0)
    #expect(throws: StoreFileError(.hardLinked(linkCount: 3), path: scratch.store("index"))) {
      _ = try scratch.secure.openFile("index", in: scratch.directory, .readOnly)
    }
  }

  @Test func aFileWithOneNameAndADirectoryWithManyOpen() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("index", "x")
    let opened = try scratch.secure.openFile("index", in: scratch.directory, .readOnly)
    #expect(opened.status.linkCount == 1)
    scratch.secure.system.closeIgnoringErrors(opened.fd)
    // A directory with subdirectories has st_nlink > 2: that is not a second name.
    for inner in ["a", "b", "c"] {
      try FileManager.default.createDirectory(
        atPath: scratch.store("dir/" + inner), withIntermediateDirectories: true)
    }
    let directory = try scratch.secure.openDirectory("dir", in: scratch.directory, creating: false)
    defer { scratch.secure.close(directory) }
    #expect(try scratch.secure.system.fstat(directory.fd).linkCount == 5)
  }

  /// A reader that opened a file just before a sign-in renamed a new one over its name sees a
  /// link count of 0: a whole old file, not a second name.
  @Test func aFileWhoseNameWasReplacedWhileOpenIsNotRefused() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("index", "old")
    let opened = try scratch.secure.openFile("index", in: scratch.directory, .readOnly)
    defer { scratch.secure.system.closeIgnoringErrors(opened.fd) }
    try scratch.write("index.new", "new")
    try #require(rename(scratch.store("index.new"), scratch.store("index")) == 0)
    let status = try scratch.secure.system.fstat(opened.fd)
    #expect(status.linkCount == 0)
    #expect(!status.hasOtherNames)
    try scratch.secure.checkOwnership(status, path: scratch.store("index"))
  }

  @Test(arguments: Direction.allCases)
  func theOnlinePathReplacesAHardLinkedFileAndTheOtherNameKeepsItsBytes(
    _ direction: Direction
  ) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("lock", "store bytes")
    let outside = try Self.link(scratch, "lock", direction)
    let before = Self.contents(outside)
    let opened = try scratch.secure.openOrReplaceFile(
      "lock", in: scratch.directory, [.readWrite, .create])
    defer { scratch.secure.system.closeIgnoringErrors(opened.fd) }
    #expect(opened.status.linkCount == 1)
    #expect(opened.status.size == 0, "a new file, not the linked one")
    #expect(opened.status.permissions == 0o600)
    #expect(Self.inode(scratch.store("lock")) != Self.inode(outside))
    #expect(Self.contents(outside) == before, "the other name keeps its bytes")
    #expect(Self.linkCount(outside) == 1)
  }

  @Test func theOnlinePathStillRefusesAFileOthersMayWrite() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try scratch.write("lock", "x")
    try #require(chmod(scratch.store("lock"), 0o666) == 0)
    #expect(throws: StoreFileError.self) {
      _ = try scratch.secure.openOrReplaceFile("lock", in: scratch.directory, .readWrite)
    }
    #expect(Self.contents(scratch.store("lock")) == "x", "refused, not replaced")
  }

  @Test func hasOtherNamesCountsOnlyFilesWithMoreThanOneName() {
    func status(_ kind: FileStatus.Kind, _ count: UInt64) -> FileStatus {
      FileStatus(
        kind: kind, permissions: 0o600, size: 0, ownerID: 0, device: 1, inode: 2,
        linkCount: count)
    }
    #expect(!status(.regular, 0).hasOtherNames)
    #expect(!status(.regular, 1).hasOtherNames)
    #expect(status(.regular, 2).hasOtherNames)
    #expect(status(.fifo, 2).hasOtherNames)
    #expect(!status(.directory, 7).hasOtherNames)
  }
}
