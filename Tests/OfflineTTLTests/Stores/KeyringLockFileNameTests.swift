import Testing

@testable import OfflineTTL

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
}
