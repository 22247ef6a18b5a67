import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A name on disk that is not valid UTF-8 is listed as its escape and every call of the seam
/// reaches the same file through it; in a store such a name is not a key: the offline path
/// skips it, an online sign-in removes it. Before, it was decoded with replacement characters,
/// which named no file: the cache read `item_unreadable` and no sign-in could remove it.
@Suite struct FileSystemNameTests {
  /// Names that are not valid UTF-8 (a lone continuation byte, a byte never used, a truncated
  /// sequence, an encoded surrogate, an overlong `/`, invalid bytes around valid ones), and
  /// valid names that must stay as they are.
  static let invalid: [[UInt8]] = [
    [0xFF], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x61, 0xFF, 0x62],
    [0x69, 0x74, 0x65, 0x6D, 0x2D, 0x30, 0xFE],
  ]
  static let valid: [[UInt8]] = [Array("item-0".utf8), Array("é".utf8), Array("\u{FFFD}".utf8)]

  /// The bytes `FileSystemName.withCString` hands to C for `path`.
  static func cBytes(_ path: String) -> [UInt8] {
    FileSystemName.withCString(path) { pointer in
      Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map {
        UInt8(bitPattern: $0)
      }
    }
  }

  static func name(_ bytes: [UInt8]) -> String {
    bytes.withUnsafeBytes { FileSystemName.name(fromEntry: $0) }
  }

  /// Runs `body` with `bytes` as a NUL-terminated C string.
  static func withRaw<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
    (bytes + [0]).withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
    }
  }

  @Test(arguments: invalid)
  func aNameThatIsNotUTF8IsEscapedAndComesBackByteForByte(_ bytes: [UInt8]) {
    let escaped = Self.name(bytes)
    #expect(FileSystemName.isEscaped(escaped))
    #expect(escaped.utf8.count == 1 + 2 * bytes.count)
    #expect(Self.cBytes(escaped) == bytes)
    // As one component of a path, between others.
    #expect(
      Self.cBytes("/a/" + escaped + "/b") == Array("/a/".utf8) + bytes + Array("/b".utf8))
    // Never a cache key.
    #expect(CacheItemKey.problem(with: escaped) != nil)
  }

  @Test(arguments: valid)
  func aValidNameStaysAsItIs(_ bytes: [UInt8]) {
    let name = Self.name(bytes)
    #expect(!FileSystemName.isEscaped(name))
    #expect(Array(name.utf8) == bytes)
    #expect(Self.cBytes(name) == bytes)
  }

  /// A NUL that is not an escape (not followed by an even number of lowercase hex digits)
  /// still ends the C string where it stands, as before.
  @Test(arguments: ["\u{0}", "\u{0}f", "\u{0}zz", "\u{0}FF", "a\u{0}ff", "\u{0}ff\u{0}"])
  func aNULThatIsNoEscapeStillEndsTheString(_ component: String) {
    let end = component.utf8.firstIndex(of: 0)!
    #expect(Self.cBytes("d/" + component) == Array("d/".utf8) + Array(component.utf8[..<end]))
  }

  /// Listing, `fstatat`, `openat`, `renameat`, `unlinkat` and `removeDirectoryAt` all reach the
  /// file or directory named by the raw bytes.
  @Test func theSeamReachesTheFileThroughItsEscape() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "fs-name")
    defer { scratch.remove() }
    let system = Syscalls()
    let directory = try system.open(scratch.path, [.readOnly, .directory])
    defer { system.closeIgnoringErrors(directory) }
    let file: [UInt8] = [0x66, 0xFF]
    let folder: [UInt8] = [0xC0, 0xAF]
    let fd = Self.withRaw(file) {
      openat(directory.rawValue, $0, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    }
    try #require(fd >= 0)
    #expect(write(fd, "abc", 3) == 3)
    close(fd)
    try #require(Self.withRaw(folder) { mkdirat(directory.rawValue, $0, 0o700) } == 0)

    let names = try system.directoryEntries(directory).sorted()
    #expect(names == [Self.name(file), Self.name(folder)].sorted())
    #expect(try system.fstatat(directory, Self.name(file)).size == 3)
    #expect(try system.fstatat(directory, Self.name(folder)).kind == .directory)
    let opened = try system.openat(directory, Self.name(file), [.readOnly])
    #expect(try system.fstat(opened).size == 3)
    system.closeIgnoringErrors(opened)
    try system.renameat(directory, Self.name(file), to: Self.name(folder) + "/moved")
    #expect(try system.directoryEntries(directory) == [Self.name(folder)])
    try system.unlinkat(directory, Self.name(folder) + "/moved")
    try system.removeDirectoryAt(directory, Self.name(folder))
    #expect(try system.directoryEntries(directory) == [])
  }

  /// In a store: a file, a directory (holding another such name) in `cache/items` and a file
  /// in `cache/tmp` whose names are not UTF-8. Offline, every item reads and the summary and
  /// keys are right; the next online commit removes all three.
  @Test func aStoreSkipsSuchNamesOfflineAndAnOnlineCommitRemovesThem() throws {
    let directory = try TemporaryStoreDirectory(prefix: "fs-name-store")
    defer { directory.remove() }
    let store = DirectoryCacheStore(atPath: directory.path)
    try DirectoryCacheStoreTests.fill(store, count: 3)
    _ = try? FileManager.default.createDirectory(
      atPath: directory.appending("cache/tmp"), withIntermediateDirectories: true)
    func create(_ parent: [UInt8], _ name: [UInt8], directory isDirectory: Bool = false) throws {
      let made = Self.withRaw(parent + [UInt8(ascii: "/")] + name) { raw -> Bool in
        if isDirectory { return mkdir(raw, 0o700) == 0 }
        let fd = open(raw, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        return true
      }
      try #require(made, "cannot create \(name) in \(parent): errno \(errno)")
    }
    let items = directory.appending("cache/items")
    try create(Array(items.utf8), [0xFF])
    try create(Array(items.utf8), [0xC3], directory: true)
    try create(Array(items.utf8) + [UInt8(ascii: "/"), 0xC3], [0xFE])
    try create(Array(directory.appending("cache/tmp").utf8), [0x80, 0x81])

    #expect(try store.keys().map(\.rawValue).sorted() == ["item-0", "item-1", "item-2"])
    #expect(try store.summary().count == 3)
    for index in 0..<3 {
      #expect(
        try store.item(forKey: CacheItemKey("item-\(index)"))?.payload
          == Data("payload-\(index)".utf8))
    }

    try store.commit(CacheChanges())
    let left = try FileManager.default.contentsOfDirectory(atPath: items).sorted()
    #expect(left == ["item-0", "item-1", "item-2"], "\(left)")
    let tmp =
      (try? FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp"))) ?? []
    #expect(tmp == [])
    #expect(try store.summary().count == 3)
  }
}

extension FileSystemName {
  /// Whether `name` is the escape of a name that is not valid UTF-8 (only these tests ask: the
  /// library never needs to, since every call of its seam takes an escape as it is).
  static func isEscaped(_ name: some StringProtocol) -> Bool {
    name.utf8.first == 0
  }
}
