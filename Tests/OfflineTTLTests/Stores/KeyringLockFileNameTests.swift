import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct KeyringLockFileNameTests {
  /// The name keeps `[A-Za-z0-9._-]` and turns every other Unicode scalar into `_` (one per
  /// scalar, as every earlier version did: an existing lock file keeps its name).
  @Test func theNameKeepsSafeCharactersAndReplacesEachOtherScalar() {
    #expect(
      KeyringLockFileName.name(applicationID: "com.example.app-1_x", kind: "marks")
        == "secret-service.com.example.app-1_x.marks.lock")
    #expect(
      KeyringLockFileName.name(applicationID: "offline-ttl-cli:/tmp/a b/store", kind: "items")
        == "secret-service.offline-ttl-cli__tmp_a_b_store.items.lock")
    // "é" written as e + U+0301 is two scalars: two underscores.
    #expect(
      KeyringLockFileName.name(applicationID: "caf\u{65}\u{301}", kind: "sealing-key")
        == "secret-service.cafe_.sealing-key.lock")
    #expect(
      KeyringLockFileName.name(applicationID: "\u{E9}/", kind: "sealing-key")
        == "secret-service.__.sealing-key.lock")
  }

  /// Every name the library makes is recognized, for any application id and kind, and so is
  /// the single lock file name of the first Secret Service release.
  @Test(arguments: [
    "a", "com.example.app", "offline-ttl-cli:/var/lib/x y/z", "\u{1F511}", "..", "/",
  ])
  func everyNameTheLibraryMakesMatches(_ applicationID: String) {
    for kind in ["marks", "items", "sealing-key"] {
      let name = KeyringLockFileName.name(applicationID: applicationID, kind: kind)
      #expect(KeyringLockFileName.matches(name), "\(name)")
    }
    #expect(KeyringLockFileName.matches("secret-service.com.example.app.lock"))
  }

  /// Near misses: no id, a character the name never holds, another prefix or suffix.
  @Test(arguments: [
    "secret-service..lock", "secret-service.lock", "secret-service.", ".lock", "",
    "secret-service.a b.marks.lock", "secret-service.a/b.lock", "secret-service.\u{E9}.lock",
    "Secret-service.a.lock", "secret-service.a.lock~", "secret-service.a.lock.tmp",
    "secret-service.a.LOCK", "x.secret-service.a.lock", "a.sealing-key.lock",
  ])
  func otherNamesDoNotMatch(_ name: String) {
    #expect(!KeyringLockFileName.matches(name))
  }

  /// The command-line tool's id holds the whole absolute store path: from a store path of
  /// about 210 bytes on, its name was longer than the 255 bytes a directory entry may have, and
  /// the lock file could not be made (`ENAMETOOLONG`). Every name is now at most 255 bytes,
  /// still recognized, made on the real file system, and accepted by the new-store rule; two
  /// long ids that share their kept characters get two names; and a name that fits (up to
  /// exactly 255 bytes) is the one every earlier version made.
  @Test(arguments: [200, 207, 208, 230, 255, 1_000, 3_000])
  func aLongIdGivesANameThatFitsAndStillMatches(_ pathLength: Int) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-lock-name")
    defer { scratch.remove() }
    let path = "/" + String(repeating: "p", count: pathLength - 1)
    for kind in ["marks", "items", "sealing-key"] {
      let id = "offline-ttl-cli:" + path
      let name = KeyringLockFileName.name(applicationID: id, kind: kind)
      let full = "secret-service.offline-ttl-cli__" + path.dropFirst() + "." + kind + ".lock"
      #expect(name.utf8.count <= 255, "\(pathLength) \(kind): \(name.utf8.count) bytes")
      #expect(full.utf8.count > 255 || name == full, "\(pathLength) \(kind): changed")
      #expect(KeyringLockFileName.matches(name), "\(name)")
      #expect(
        name.hasPrefix("secret-service.offline-ttl-cli__pppp") && name.hasSuffix(kind + ".lock"))
      let other = KeyringLockFileName.name(applicationID: id + "q", kind: kind)
      #expect(other != name, "\(pathLength) \(kind): two ids, one name")
      let fd = open(scratch.appending(name), O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
      #expect(fd >= 0, "\(pathLength) \(kind): errno \(errno)")
      if fd >= 0 { close(fd) }
      let (_, result) = try NewStoreDirectoryTests.commit(besides: name, in: scratch)
      #expect(throws: Never.self, "\(pathLength) \(kind)") { try result.get() }
      try FileManager.default.removeItem(atPath: scratch.appending("store"))
    }
  }

  /// The cut never splits a Unicode scalar of the id: with every scalar replaced by `_` the
  /// safe id is ASCII anyway, and a name at exactly 255 bytes is kept as it is.
  @Test func aNameOfExactlyTheLimitIsKeptAndOneByteMoreIsBounded() {
    let tail = ".marks.lock"
    let fits = String(repeating: "a", count: 255 - "secret-service.".utf8.count - tail.utf8.count)
    #expect(
      KeyringLockFileName.name(applicationID: fits, kind: "marks")
        == "secret-service." + fits + tail)
    let over = KeyringLockFileName.name(applicationID: fits + "a", kind: "marks")
    #expect(over.utf8.count == 255 && over != "secret-service." + fits + "a" + tail)
    #expect(KeyringLockFileName.matches(over))
    let wide = KeyringLockFileName.name(
      applicationID: String(repeating: "\u{1F511}", count: 300), kind: "marks")
    #expect(wide.utf8.count <= 255 && KeyringLockFileName.matches(wide))
  }
}
