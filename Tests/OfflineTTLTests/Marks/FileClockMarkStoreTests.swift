import Dispatch
import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

func instant(_ seconds: Int64) -> WallClockInstant {
  WallClockInstant(nanosecondsSinceEpoch: seconds * 1_000_000_000)
}

/// Reads and writes a store directory's files behind the store's back.
struct StoreFiles {
  let dir: TemporaryStoreDirectory
  var store: FileClockMarkStore { FileClockMarkStore(atPath: dir.path) }
  var recordPath: String { dir.appending(FileClockMarkStore.recordFileName) }
  var lockPath: String { dir.appending(FileClockMarkStore.lockFileName) }

  func recordBytes() throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: recordPath)))
  }

  /// Overwrites the record's bytes in place (keeping its inode and mode).
  func overwrite(_ bytes: [UInt8]) throws {
    let handle = try #require(FileHandle(forWritingAtPath: recordPath))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }

  func mode(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
  }
}

@Suite struct FileClockMarkStoreTests {
  @Test func createsThePrivateDirectoryAndFilesOnlyWhenWriting() throws {
    let parent = try TemporaryStoreDirectory()
    defer { parent.remove() }
    let path = parent.appending("store")
    let store = FileClockMarkStore(atPath: path)
    #expect(throws: ClockMarkStoreError.self) { _ = try store.observe(now: instant(1)) }
    #expect(throws: ClockMarkStoreError.self) { _ = try store.read() }
    #expect(!FileManager.default.fileExists(atPath: path), "observe and read create nothing")
    _ = try store.resetAfterOnlineSignIn(now: instant(10))
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    #expect(attributes[.posixPermissions] as? Int == 0o700)
    let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    #expect(names == ["clock-mark", "clock-mark.lock"])
    for name in names {
      let mode = try FileManager.default.attributesOfItem(atPath: path + "/" + name)
      #expect(mode[.posixPermissions] as? Int == 0o600, "\(name)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/clock-mark")).count == 8192)
  }

  @Test func observeInAnEmptyDirectoryCreatesNoFile() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    do {
      _ = try FileClockMarkStore(atPath: dir.path).observe(now: instant(1))
      Issue.record("observe succeeded on an absent record")
    } catch {
      #expect(error.code == .absent)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
  }

  @Test func writesAlternateSlotsAndNeverTouchTheNewest() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(100))
    var before = try files.recordBytes()
    for now in Int64(101)...Int64(106) {
      let newest = try FileClockMarkStore.newest(in: before, fd: FileDescriptor(rawValue: -1))
      _ = try files.store.observe(now: instant(now))
      let after = try files.recordBytes()
      let kept = MarkRecordCodec.slotOffsets[newest.newestSlot]
      #expect(after[kept..<(kept + 4096)] == before[kept..<(kept + 4096)], "newest slot untouched")
      let next = try FileClockMarkStore.newest(in: after, fd: FileDescriptor(rawValue: -1))
      #expect(next.newestSlot != newest.newestSlot)
      #expect(next.sequence == newest.sequence + 1)
      before = after
    }
  }

  @Test func aFlippedBitInTheNewestSlotFallsBackToTheOtherSlot() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(100))
    _ = try files.store.observe(now: instant(200))
    _ = try files.store.observe(now: instant(300))
    let bytes = try files.recordBytes()
    let newest = try FileClockMarkStore.newest(in: bytes, fd: FileDescriptor(rawValue: -1))
    var damaged = bytes
    damaged[MarkRecordCodec.slotOffsets[newest.newestSlot] + 30] ^= 0x10
    try files.overwrite(damaged)
    #expect(try files.store.read().mark == instant(200), "falls back to the record before")
    #expect(try files.recordBytes() == damaged, "reading changes nothing")
    var older = bytes
    older[MarkRecordCodec.slotOffsets[1 - newest.newestSlot] + 30] ^= 0x10
    try files.overwrite(older)
    #expect(try files.store.read().mark == instant(300), "damage in the older slot is invisible")
    #expect(try files.store.observe(now: instant(400)).current.mark == instant(400))
    #expect(try files.store.read().mark == instant(400))
  }

  @Test func aResetInPlaceFillsBothSlotsSoAFlipCannotUndoIt() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(100))
    _ = try files.store.observe(now: instant(9_000))
    let reset = try files.store.resetAfterOnlineSignIn(now: instant(50))
    #expect(reset.generation == 2)
    let bytes = try files.recordBytes()
    for slot in 0..<2 {
      var damaged = bytes
      damaged[MarkRecordCodec.slotOffsets[slot] + 30] ^= 0x01
      try files.overwrite(damaged)
      #expect(try files.store.read() == reset, "a flip in slot \(slot) still reads the reset")
    }
  }

  @Test func resetOverAnUnreadableRecordContinuesTheHighestValidGeneration() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    for now in [Int64(1), 2, 3] { _ = try files.store.resetAfterOnlineSignIn(now: instant(now)) }
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o644], ofItemAtPath: files.recordPath)
    #expect(throws: ClockMarkStoreError.self) { _ = try files.store.read() }
    let reset = try files.store.resetAfterOnlineSignIn(now: instant(9))
    #expect(reset.generation == 4)
    #expect(try files.mode(files.recordPath) == 0o600)
    try files.overwrite([UInt8](repeating: 0, count: 100))
    #expect(try files.store.resetAfterOnlineSignIn(now: instant(9)).generation == 1)
  }

  @Test func createFirstMarkWritesGenerationZeroOnceAndLeavesUnreadableAlone() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    let first = try files.store.createFirstMark(now: instant(50))
    #expect(first.generation == 0)
    #expect(try files.store.createFirstMark(now: instant(80)) == first)
    try files.overwrite([1, 2, 3])
    #expect(throws: ClockMarkStoreError.self) {
      _ = try files.store.createFirstMark(now: instant(1))
    }
    #expect(try files.recordBytes() == [1, 2, 3])
  }

  @Test func aRemovedLockFileIsRecreatedWhenTheRecordExists() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(5))
    try FileManager.default.removeItem(atPath: files.lockPath)
    #expect(try files.store.observe(now: instant(6)).current.mark == instant(6))
    #expect(FileManager.default.fileExists(atPath: files.lockPath))
  }

  @Test func eightThreadsSharingOneInstanceAndEightWithTheirOwnKeepTheInvariants() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let shared = FileClockMarkStore(atPath: dir.path)
    let base: Int64 = 1_000_000
    let initial = try shared.resetAfterOnlineSignIn(now: instant(base))
    let history = Mutex(MarkHistory())
    history.withLock {
      $0.append(
        .init(isReset: true, actor: 99, now: initial.mark, mark: initial.mark, generation: 1))
    }
    let errors = Mutex([String]())
    // Actors 0-7 share one instance, 8-15 each have their own; actor 16 resets.
    runConcurrently(17) { actor in
      var random = SystemRandomNumberGenerator()
      if actor == 16 {
        for round in 0..<3 {
          let now = instant(base - 1_000 * Int64(round + 1))
          do {
            let record = try FileClockMarkStore(atPath: dir.path).resetAfterOnlineSignIn(now: now)
            history.withLock {
              $0.append(
                .init(
                  isReset: true, actor: actor, now: now, mark: record.mark,
                  generation: record.generation))
            }
          } catch { errors.withLock { $0.append("reset: \(error)") } }
        }
        return
      }
      let store = actor < 8 ? shared : FileClockMarkStore(atPath: dir.path)
      var local: [MarkHistory.Event] = []
      for _ in 0..<40 {
        let jump: Int64 = Int.random(in: 0..<10, using: &random) == 0 ? -500_000 : 0
        let now = instant(base + jump + Int64.random(in: -2_000...2_000, using: &random))
        do {
          let transition = try store.observe(now: now)
          local.append(
            .init(
              isReset: false, actor: actor, now: now, mark: transition.current.mark,
              generation: transition.current.generation))
        } catch { errors.withLock { $0.append("observe: \(error)") } }
      }
      history.withLock { $0.events.append(contentsOf: local) }
    }
    #expect(errors.withLock { $0 } == [])
    let final = try shared.read()
    #expect(final.generation == 4)
    #expect(history.withLock { $0.violations(final: final) } == [])
  }
}

@Suite struct FileClockMarkStoreLinkTests {
  @Test func aSymbolicLinkAsTheDirectoryIsAnUnusableStore() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let real = dir.appending("real")
    _ = try FileClockMarkStore(atPath: real).resetAfterOnlineSignIn(now: instant(1))
    let link = dir.appending("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
    do {
      _ = try FileClockMarkStore(atPath: link).observe(now: instant(2))
      Issue.record("a symlinked store directory was followed")
    } catch {
      #expect(error.code == .storeUnusable)
      // Named as a link (Linux reports ENOTDIR for O_DIRECTORY | O_NOFOLLOW on a link).
      #expect(error.reason.contains("is a symbolic link"), "\(error)")
    }
    #expect(try FileClockMarkStore(atPath: real).read().mark == instant(1))
  }

  @Test func aSymbolicLinkAsTheLockFileIsALockFailure() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let files = StoreFiles(dir: dir)
    _ = try files.store.resetAfterOnlineSignIn(now: instant(1))
    try FileManager.default.removeItem(atPath: files.lockPath)
    try FileManager.default.createSymbolicLink(
      atPath: files.lockPath, withDestinationPath: dir.appending("elsewhere"))
    do {
      _ = try files.store.observe(now: instant(2))
      Issue.record("a symlinked lock file was followed")
    } catch {
      #expect(error.code == .lockFailed)
      #expect(error.reason.contains("is a symbolic link"), "\(error)")
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appending("elsewhere")))
  }
}
