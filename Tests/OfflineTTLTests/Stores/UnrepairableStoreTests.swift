import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What an online sign-in does with a store it cannot trust: a directory or lock file of
/// another user, or one group or others may write, is refused before anything is written (the
/// online path repairs files, never a directory someone else controls); a clock-mark record of
/// another user, or one group or others may read or write, is `insecure_store` offline and
/// replaced by the sign-in's reset.
@Suite struct UnrepairableStoreTests {
  static let base = HardLinkedStoreFileTests.base
  typealias Scene = HardLinkedStoreFileTests.Scene

  /// A gate over the scene's file stores, its clock at `base` + 60 s.
  static func gate(_ scene: Scene) -> OfflineAccessGate {
    OfflineAccessGate(
      cache: scene.cache, marks: scene.marks,
      policy: try! EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: ManualWallClock(base.saturatingAdvanced(by: .seconds(60))))
  }

  /// The store's tree: path → type, mode, size and modification time (links not followed).
  static func tree(_ scene: Scene) -> [String: String] {
    var result: [String: String] = [:]
    for name in FileManager.default.subpaths(atPath: scene.store) ?? [] {
      var info = stat()
      guard lstat(scene.store + "/" + name, &info) == 0 else { continue }
      result[name] =
        "\(info.st_mode) \(info.st_uid) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
    return result
  }

  /// One change that makes a position untrustworthy, and how the user undoes it.
  struct Change: CustomTestStringConvertible, Sendable {
    let position: String
    let mode: mode_t?
    var testDescription: String {
      position + " " + (mode.map { "mode 0" + String($0, radix: 8) } ?? "owned by uid 65534")
    }

    func apply(_ scene: Scene) throws {
      let path = scene.store + "/" + position
      if let mode {
        try #require(chmod(path, mode) == 0)
      } else {
        try #require(chown(path, 65534, 65534) == 0, "chown needs root")
      }
    }

    func undo(_ scene: Scene, directory: Bool) throws {
      let path = scene.store + "/" + position
      try #require(chmod(path, directory ? 0o700 : 0o600) == 0)
      try #require(chown(path, geteuid(), getegid()) == 0)
    }
  }

  static let directories: [Change] = ["cache/tmp", "cache/items"].flatMap { position in
    [Change(position: position, mode: 0o777), Change(position: position, mode: 0o770)]
      + (geteuid() == 0 ? [Change(position: position, mode: nil)] : [])
  }

  /// Outside test 2, F3 (`cache/tmp`) and F4 (`cache/items`, a plain sign-in), in the library:
  /// the sign-in with and without items, and a session commit, refuse with `insecure_store`
  /// naming the directory; no staging, `pending`, generation or byte of the store changed. Once
  /// fixed, a sign-in succeeds.
  @Test(arguments: directories)
  func anInsecureDirectoryIsRefusedBeforeTheSignInWritesAnything(_ change: Change) throws {
    let scene = try Scene()
    defer { scene.parent.remove() }
    // A tmp/ as a commit leaves it.
    _ = try Self.gate(scene).beginOnlineSession(writing: [(CacheItemKey("token"), Data("a".utf8))])
    let session = try Self.gate(scene).beginOnlineSession()
    try change.apply(scene)
    let before = Self.tree(scene)
    let generation = try scene.marks.read().generation
    let attempts: [(String, () throws -> Void)] = [
      ("plain sign-in", { _ = try Self.gate(scene).beginOnlineSession() }),
      (
        "sign-in with an item",
        { _ = try Self.gate(scene).beginOnlineSession(writing: [(CacheItemKey("token"), Data())]) }
      ),
      ("session commit", { try session.write(CacheItemKey("other"), Data("b".utf8)) }),
    ]
    for (label, attempt) in attempts {
      var refusal: StoreError?
      do {
        try attempt()
      } catch let error as OnlineSessionError {
        refusal = error.storeError
      }
      #expect(refusal?.code == .insecureStore, "\(change) \(label): \(String(describing: refusal))")
      #expect(
        refusal?.message.contains(scene.store + "/" + change.position) == true,
        "\(change) \(label): names the path")
      #expect(Self.tree(scene) == before, "\(change) \(label): the store changed")
      #expect(try scene.marks.read().generation == generation, "\(change) \(label): committed")
    }
    try change.undo(scene, directory: true)
    let after = try Self.gate(scene).beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("c".utf8))])
    #expect(after.generation == generation + 1)
    #expect(try scene.cache.item(forKey: "token")?.payload == Data("c".utf8))
  }

  /// The mark store's half: a `clock-mark.lock` of another user, or one group or others may
  /// write, is refused by ``ClockMarkStore/checkBeforeOnlineSignIn()`` and so by the sign-in,
  /// before the item store stages anything. A lock file the reset replaces (a FIFO, a
  /// directory, a second name) or a missing one passes the check.
  @Test func anInsecureMarkLockIsRefusedBeforeTheItemStoreStages() throws {
    var changes = [Change(position: "clock-mark.lock", mode: 0o666)]
    changes.append(Change(position: "clock-mark.lock", mode: 0o620))
    if geteuid() == 0 { changes.append(Change(position: "clock-mark.lock", mode: nil)) }
    for change in changes {
      let scene = try Scene()
      defer { scene.parent.remove() }
      try change.apply(scene)
      let before = Self.tree(scene)
      #expect(
        HardLinkedStoreFileTests.refusal { try scene.marks.checkBeforeOnlineSignIn() }?.code
          == .insecureStore, "\(change)")
      var refusal: StoreError?
      do {
        _ = try Self.gate(scene).beginOnlineSession(
          writing: [(CacheItemKey("token"), Data("a".utf8))])
      } catch {
        refusal = error.storeError
      }
      #expect(refusal?.code == .insecureStore, "\(change): \(String(describing: refusal))")
      #expect(Self.tree(scene) == before, "\(change): the store changed")
    }
    // What the reset repairs passes.
    for repaired in ["missing", "fifo", "directory", "hard link"] {
      let scene = try Scene()
      defer { scene.parent.remove() }
      let lock = scene.store + "/clock-mark.lock"
      try #require(unlink(lock) == 0)
      switch repaired {
      case "fifo": try #require(mkfifo(lock, 0o600) == 0)
      case "directory": try #require(mkdir(lock, 0o700) == 0)
      case "hard link":
        try Data().write(to: URL(fileURLWithPath: lock))
        try #require(chmod(lock, 0o600) == 0)
        try #require(hardLink(lock, scene.parent.appending("outside/lock")) == 0)
      default: break
      }
      try neverWaitingOn([lock], "the check and sign-in over a \(repaired) lock file") {
        #expect(
          HardLinkedStoreFileTests.refusal { try scene.marks.checkBeforeOnlineSignIn() } == nil,
          "\(repaired)")
        let session = try Self.gate(scene).beginOnlineSession()
        #expect(session.generation == 2, "\(repaired)")
      }
    }
  }

  /// Outside test 2, F9: a record that group or others may read is the same kind as one they
  /// may write, or another user's: `insecure_store` from every offline operation, the record
  /// left alone; the online reset reads it for its generation only and replaces it with a new
  /// file of its own (0600).
  @Test func aRecordOthersMayReadOrWriteIsInsecureAndTheResetReplacesIt() throws {
    var modes: [mode_t?] = [0o640, 0o644, 0o604, 0o660, 0o606, 0o600 | 0o070]
    if geteuid() == 0 { modes.append(nil) }
    for mode in modes {
      let scene = try Scene()
      defer { scene.parent.remove() }
      let change = Change(position: "clock-mark", mode: mode)
      try change.apply(scene)
      let record = scene.store + "/clock-mark"
      let bytes = HardLinkedStoreFileTests.bytes(record)
      let store = scene.marks
      let operations: [(String, () throws -> Void)] = [
        ("read", { _ = try store.read() }),
        ("observe", { _ = try store.observe(resolution: .zero, readingClocks: { Self.at(60) }) }),
        ("createFirstMark", { _ = try store.createFirstMark(readingClocks: { Self.at(60) }) }),
      ]
      for (label, operation) in operations {
        let error = HardLinkedStoreFileTests.refusal(operation)
        #expect(error?.code == .insecureStore, "\(change) \(label): \(String(describing: error))")
        #expect(error?.message.contains(record) == true, "\(change) \(label)")
        #expect(error?.message.contains("sign in online") == true, "\(change) \(label)")
        #expect(HardLinkedStoreFileTests.bytes(record) == bytes, "\(change) \(label): changed")
      }
      #expect(
        HardLinkedStoreFileTests.refusal { try store.checkBeforeOnlineSignIn() } == nil,
        "\(change): the reset repairs a record")
      let reset = try store.resetAfterOnlineSignIn(readingClocks: { Self.at(120) })
      #expect(reset.generation == 2, "\(change): read for its generation")
      var info = stat()
      #expect(lstat(record, &info) == 0)
      #expect(info.st_mode & 0o7777 == 0o600 && info.st_uid == geteuid(), "\(change)")
      #expect(try store.read() == reset, "\(change)")
    }
  }

  static func at(_ seconds: Int64) -> ClockObservation { HardLinkedStoreFileTests.at(seconds) }

  /// The secure open's helpers for these checks, on their own.
  @Test func theDirectoryAndPrivateFileChecks() throws {
    let scratch = try SecureStoreFilesTests.Scratch()
    defer { scratch.remove() }
    let secure = scratch.secure
    // A missing name, a file or a link where a directory belongs: left to the repair.
    try secure.refuseInsecureDirectory("missing", in: scratch.directory)
    try scratch.write("file", "x")
    try #require(chmod(scratch.store("file"), 0o666) == 0)
    try secure.refuseInsecureDirectory("file", in: scratch.directory)
    try #require(symlink(scratch.outside(""), scratch.store("link")) == 0)
    try secure.refuseInsecureDirectory("link", in: scratch.directory)
    try #require(mkdir(scratch.store("dir"), 0o700) == 0)
    try secure.refuseInsecureDirectory("dir", in: scratch.directory)
    for mode: mode_t in [0o777, 0o770, 0o707, 0o720, 0o702] {
      try #require(chmod(scratch.store("dir"), mode) == 0)
      #expect(throws: StoreFileError.self, "0\(String(mode, radix: 8))") {
        try secure.refuseInsecureDirectory("dir", in: scratch.directory)
      }
    }
    // Readable by others is fine for a directory, not for a private file.
    try #require(chmod(scratch.store("dir"), 0o755) == 0)
    try secure.refuseInsecureDirectory("dir", in: scratch.directory)
    for mode: mode_t in [0o640, 0o604, 0o644] {
      try #require(chmod(scratch.store("file"), mode) == 0)
      let opened = try secure.openFile("file", in: scratch.directory, .readOnly)
      defer { secure.system.closeIgnoringErrors(opened.fd) }
      do {
        try secure.checkPrivate(opened.status, path: scratch.store("file"))
        Issue.record("0\(String(mode, radix: 8)) passed as private")
      } catch {
        #expect(error.isInsecure && !error.isHardLinked)
        #expect(error.description.contains("group or others may read it"), "\(error)")
      }
    }
  }
}
