import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// Sealed file stores through the gate: the conformance suites, what is on disk, and every
/// tampering refused with its typed reason, bytes left alone, until a sign-in re-seals.
@Suite struct SealedStoreTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

  /// A sealed store: a directory for the store, another for its key.
  struct Fixture {
    let root: TemporaryStoreDirectory
    let store: String
    let keyPath: String
    let clock = ManualWallClock(SealedStoreTests.start)

    init() throws {
      root = try TemporaryStoreDirectory(prefix: "sealed")
      store = root.path + "/store"
      keyPath = root.path + "/key"
    }

    func gate(keyPath: String? = nil, sealed: Bool = true, store: String? = nil) throws
      -> OfflineAccessGate
    {
      let provider: (any SealingKeyProvider)? =
        sealed ? FileSealingKeyProvider(path: keyPath ?? self.keyPath) : nil
      let directory = store ?? self.store
      return OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: directory, sealing: provider),
        marks: FileClockMarkStore(atPath: directory, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: clock)
    }

    /// The atomic sign-in: the items are staged, sealed for the new generation, and committed
    /// by the mark reset.
    func signIn(_ items: [String: String], gate: OfflineAccessGate? = nil) throws {
      _ = try (gate ?? self.gate()).beginOnlineSession(
        writing: items.map { (try! CacheItemKey($0.key), Data($0.value.utf8)) })
    }

    /// The code of the store error behind a refusal of `openOffline` or of reading `key`.
    func refusal(_ key: String = "token", gate: OfflineAccessGate? = nil) throws -> String? {
      switch try (gate ?? self.gate()).openOffline() {
      case .refused(let decision):
        return (decision.markError ?? decision.cacheError).map { "\($0.code)" }
          ?? "\(decision.reasons)"
      case .opened(let reader):
        do {
          _ = try reader.item(forKey: CacheItemKey(key))
          return nil
        } catch {
          return (error as? OfflineReadError)?.storeError.map { "\($0.code)" } ?? "\(error)"
        }
      }
    }

    var files: [String] {
      let base = URL(fileURLWithPath: store)
      let names = (FileManager.default.enumerator(atPath: store)?.allObjects as? [String]) ?? []
      return names.filter {
        var directory: ObjCBool = false
        let exists = FileManager.default.fileExists(
          atPath: base.appendingPathComponent($0).path, isDirectory: &directory)
        return exists && !directory.boolValue
      }.sorted()
    }

    func bytes(_ name: String) throws -> Data {
      try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
    }

    func write(_ data: Data, _ name: String) throws {
      try data.write(to: URL(fileURLWithPath: store + "/" + name))
    }

    func flip(_ name: String, at offset: Int) throws {
      var data = try bytes(name)
      data[offset] ^= 0x01
      try write(data, name)
    }

    func snapshot() throws -> [String: Data] {
      Dictionary(uniqueKeysWithValues: try files.map { ($0, try bytes($0)) })
    }
  }

  @Test func markConformanceOnASealedStore() throws {
    let keys = try TemporaryStoreDirectory(prefix: "sealed-keys")
    defer { keys.remove() }
    let provider = FileSealingKeyProvider(path: keys.path + "/key")
    _ = try provider.loadOrCreateKey()
    try ClockMarkStoreConformance.run(
      ClockMarkStoreConformance.Backend(
        makeEmpty: {
          FileClockMarkStore(
            atPath: try TemporaryStoreDirectory(prefix: "sealed-conformance").path,
            sealing: provider)
        },
        reopen: { store in
          FileClockMarkStore(
            atPath: (store as! FileClockMarkStore).directoryPath, sealing: provider)
        },
        corrupt: { store in
          let path =
            (store as! FileClockMarkStore).directoryPath + "/" + FileClockMarkStore.recordFileName
          let handle = try #require(FileHandle(forWritingAtPath: path))
          try handle.write(
            contentsOf: Data(repeating: 0xEE, count: FileClockMarkStore.recordFileSize))
          try handle.close()
        },
        cleanUp: { store in
          try? FileManager.default.removeItem(atPath: (store as! FileClockMarkStore).directoryPath)
        }))
  }

  @Test func cacheConformanceOnASealedStore() throws {
    let keys = try TemporaryStoreDirectory(prefix: "sealed-keys")
    defer { keys.remove() }
    let provider = FileSealingKeyProvider(path: keys.path + "/key")
    var directories: [TemporaryStoreDirectory] = []
    defer { directories.forEach { $0.remove() } }
    try CacheItemStoreConformance.check {
      let directory = try TemporaryStoreDirectory(prefix: "sealed-cache-conformance")
      directories.append(directory)
      // The sealed index is bound to the clock mark of the same directory.
      _ = try FileClockMarkStore(atPath: directory.path, sealing: provider)
        .resetAfterOnlineSignIn(now: SealedStoreTests.start)
      return DirectoryCacheStore(atPath: directory.path, sealing: provider)
    }
  }

  @Test func aSealedStoreServesItsItemsAndKeepsNoPayloadInPlainText() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let marker = "PAYLOAD-MARKER-\(UUID().uuidString)"
    try f.signIn(["token": marker, "profile": marker + "-profile"])
    #expect(try f.refusal() == nil)
    guard case .opened(let reader) = try f.gate().openOffline() else {
      Issue.record("refused")
      return
    }
    #expect(try reader.item(forKey: CacheItemKey("token"))?.payload == Data(marker.utf8))
    for (name, data) in try f.snapshot() {
      #expect(data.range(of: Data(marker.utf8)) == nil, "\(name) holds the payload in plain text")
      #expect(data.range(of: Data("MARKER".utf8)) == nil, "\(name)")
    }
    #expect(try f.files.contains("cache/items/token"))
  }

  /// One tampering, its expected code, and the bytes on disk unchanged after the refusal.
  func expectRefused(
    _ f: Fixture, _ expected: String, key: String = "token", _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let before = try f.snapshot()
    #expect(try f.refusal(key) == expected, comment, sourceLocation: sourceLocation)
    #expect(try f.snapshot() == before, "bytes left alone", sourceLocation: sourceLocation)
  }

  func recovers(_ f: Fixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try f.signIn(["token": "new"])
    #expect(try f.refusal() == nil, "a sign-in re-seals", sourceLocation: sourceLocation)
  }

  /// Flips each byte of `ranges` of the store file `name` in turn (an XOR with 0x01, in place),
  /// asks the store (`refusal()`), checks a refused file was left exactly as flipped, and
  /// restores the byte; `judge` gets each offset and refusal code. Ends with the store fresh
  /// again.
  func flipEachByte(
    _ f: Fixture, _ name: String, in ranges: [Range<Int>],
    judge: (Int, String?) -> Void
  ) throws {
    let path = f.store + "/" + name
    let fd = open(path, O_RDWR)
    try #require(fd >= 0)
    defer { close(fd) }
    let original = try f.bytes(name)
    for offset in ranges.joined() {
      var byte = original[offset] ^ 0x01
      try #require(pwrite(fd, &byte, 1, off_t(offset)) == 1)
      let code = try f.refusal()
      judge(offset, code)
      if code != nil {
        var flipped = original
        flipped[offset] ^= 0x01
        #expect(try f.bytes(name) == flipped, "offset \(offset): bytes left alone")
      }
      byte = original[offset]
      try #require(pwrite(fd, &byte, 1, off_t(offset)) == 1)
    }
    #expect(try f.refusal() == nil, "fresh again once every byte is restored")
  }

  /// Every single byte of a small sealed item (header, nonce, ciphertext, tag), flipped in turn:
  /// `item_unauthentic` (or `seal_mismatch` for its magic and version), never read.
  @Test func everyFlippedByteOfASmallItemIsRefused() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value", "other": "x"])
    let size = try f.bytes("cache/items/token").count
    var refused = 0
    try flipEachByte(f, "cache/items/token", in: [0..<size]) { offset, code in
      #expect(
        code == "item_unauthentic" || code == "seal_mismatch",
        "offset \(offset) of \(size): \(code ?? "read as valid")")
      refused += 1
    }
    #expect(refused == size)
    try recovers(f)
  }

  /// Every single byte of the sealed index (header and body), flipped in turn:
  /// `index_unauthentic` (or `seal_mismatch` for its magic, version and key check).
  @Test func everyFlippedByteOfTheIndexIsRefused() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value", "other": "x", "third": "y"])
    let size = try f.bytes("cache/index").count
    #expect(size > 128, "a header and a body")
    try flipEachByte(f, "cache/index", in: [0..<size]) { offset, code in
      #expect(
        ["index_unauthentic", "seal_mismatch"].contains(code ?? ""),
        "offset \(offset) of \(size): \(code ?? "read as valid")")
    }
    try recovers(f)
  }

  /// Every single byte of each clock-mark slot and of its seal trailer, flipped in turn:
  /// `mark_unauthentic` (or `seal_mismatch` for the trailer's magic and key check). Bytes of the
  /// record outside both (padding the format does not read) are sampled: a flip there is refused
  /// or changes nothing.
  @Test func everyFlippedByteOfEachMarkSlotIsRefused() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value"])
    let record = [UInt8](try f.bytes("clock-mark"))
    var slots: [Range<Int>] = []
    for index in MarkRecordCodec.slotOffsets.indices {
      let slot = FileClockMarkStore.slotBytes(record, index)
      let seal = FileClockMarkStore.sealOffset(index)
      slots.append(slot.startIndex..<slot.endIndex)
      slots.append(seal..<(seal + MarkSeal.length))
    }
    try flipEachByte(f, "clock-mark", in: slots) { offset, code in
      #expect(
        ["mark_unauthentic", "seal_mismatch"].contains(code ?? ""),
        "offset \(offset): \(code ?? "read as valid")")
    }
    let covered = Set(slots.joined())
    let outside = stride(from: 0, to: record.count, by: 61).filter { !covered.contains($0) }
    #expect(outside.count > 100)
    try flipEachByte(f, "clock-mark", in: outside.map { $0..<($0 + 1) }) { offset, code in
      #expect(
        code == nil || ["mark_unauthentic", "seal_mismatch"].contains(code!),
        "offset \(offset) (outside every slot): \(code!)")
    }
    try recovers(f)
  }

  @Test(arguments: [0, 4, 8, 16, 24, 32, 40, 56, 60, -1])
  func aFlippedItemByteIsUnauthentic(_ offset: Int) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value", "other": "x"])
    let size = try f.bytes("cache/items/token").count
    try f.flip("cache/items/token", at: offset < 0 ? size - 1 : offset)
    let code = try f.refusal()
    #expect(
      code == "item_unauthentic" || code == "seal_mismatch", "offset \(offset): \(code ?? "nil")")
    try recovers(f)
  }

  @Test(arguments: [0, 8, 32, 40, 48, 60, 64, 100, 127, 130, -1])
  func aFlippedIndexByteIsRefused(_ offset: Int) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value", "other": "x"])
    let size = try f.bytes("cache/index").count
    try f.flip("cache/index", at: offset < 0 ? size - 1 : offset)
    let code = try f.refusal()
    #expect(
      ["index_unauthentic", "seal_mismatch"].contains(code ?? ""),
      "offset \(offset): \(code ?? "nil")")
    try recovers(f)
  }

  @Test(arguments: [0, 8, 16, 24, 72, 100, 124, 256, 268, 290, 307, 4096, 4120, 4352, 4403])
  func aFlippedMarkSlotByteIsRefused(_ offset: Int) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret value"])
    try f.flip("clock-mark", at: offset)
    let code = try f.refusal()
    #expect(
      ["mark_unauthentic", "seal_mismatch"].contains(code ?? ""),
      "offset \(offset): \(code ?? "nil")")
    try recovers(f)
  }

  @Test func swappedItemsAreUnauthentic() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "one", "other": "two"])
    let token = try f.bytes("cache/items/token")
    try f.write(try f.bytes("cache/items/other"), "cache/items/token")
    try f.write(token, "cache/items/other")
    try expectRefused(f, "item_unauthentic")
    try expectRefused(f, "item_unauthentic", key: "other")
    try f.signIn(["token": "new", "other": "new"])
    #expect(try f.refusal("other") == nil)
  }

  @Test func anItemFromAnOlderGenerationIsUnauthentic() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    let old = try f.bytes("cache/items/token")
    f.clock.advance(by: .seconds(60))
    try f.signIn(["token": "new"])
    try f.write(old, "cache/items/token")
    try expectRefused(f, "item_unauthentic")
    try recovers(f)
  }

  @Test func anItemUntouchedByALaterSignInStillReads() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "kept"])
    f.clock.advance(by: .seconds(60))
    try f.signIn(["other": "new"])
    try f.signIn([:])
    #expect(try f.refusal("token") == nil)
    #expect(try f.refusal("other") == nil)
  }

  @Test func anItemFromAnotherStoreWithTheSameKeyIsUnauthentic() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "mine"])
    let otherStore = f.root.path + "/other"
    try f.signIn(["token": "theirs"], gate: try f.gate(store: otherStore))
    try f.write(
      try Data(contentsOf: URL(fileURLWithPath: otherStore + "/cache/items/token")),
      "cache/items/token")
    try expectRefused(f, "item_unauthentic")
    try recovers(f)
  }

  @Test func anIndexFromAnOlderGenerationIsUnauthentic() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    let old = try f.bytes("cache/index")
    f.clock.advance(by: .seconds(60))
    try f.signIn(["token": "new"])
    try f.write(old, "cache/index")
    try expectRefused(f, "index_unauthentic")
    try recovers(f)
  }

  /// The index and items of another store under the same key and at the same generation: the
  /// check's binding (confirmed against the store id the observed mark carries) refuses them.
  @Test func anIndexAndItemsFromAnotherStoreAtTheSameGenerationAreUnauthentic() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "mine"])
    let otherStore = f.root.path + "/other"
    try f.signIn(["token": "theirs"], gate: try f.gate(store: otherStore))
    for name in ["cache/index", "cache/items/token"] {
      try f.write(try Data(contentsOf: URL(fileURLWithPath: otherStore + "/" + name)), name)
    }
    let decision = try f.gate().checkEligibility()
    #expect(!decision.isFresh)
    #expect(decision.cacheError?.code == .indexUnauthentic)
    try expectRefused(f, "index_unauthentic")
    try recovers(f)
  }

  /// A repeated check on a sealed store reads the mark record once, under a non-blocking shared
  /// lock through the descriptors the store keeps open (the index's binding is confirmed against
  /// that reading), opens no file, and reads the key file, once remembered, with one `lstat`
  /// per check: the item store and the mark store use the key the check loaded first (one key
  /// per operation). The first check marks the stores used; the second opens the descriptors
  /// they keep.
  @Test func aRepeatedSealedCheckLocksTheMarkOnceAndKeepsTheKey() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let storeFaults = SyscallFaultPlan()
    let keyFaults = SyscallFaultPlan()
    let provider = FileSealingKeyProvider(path: f.keyPath, faults: keyFaults, settle: .zero)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: f.store, faults: storeFaults, sealing: provider),
      marks: FileClockMarkStore(atPath: f.store, faults: storeFaults, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
    #expect(gate.checkEligibility().isFresh)
    #expect(gate.checkEligibility().isFresh)
    for _ in 0..<3 {
      storeFaults.resetCounts()
      keyFaults.resetCounts()
      let decision = gate.checkEligibility()
      #expect(decision.isFresh)
      #expect(storeFaults.count(of: .flock) == 2, "shared, non-blocking, and its release")
      #expect(storeFaults.count(of: .open) == 0 && storeFaults.count(of: .openat) == 0)
      #expect(storeFaults.count(of: .pread) == 2, "the index header and the mark record")
      #expect(keyFaults.count(of: .open) == 0)
      #expect(keyFaults.count(of: .pread) == 0)
      #expect(keyFaults.count(of: .fstatat) == 1)
    }
  }

  /// A reader's sealed item read reads the mark record only for its own two rechecks (before
  /// the item, and the generation after): the index's binding is checked against the record the
  /// decision observed, not read a third time. Without a change watch each of those reads is a
  /// kept read under a non-blocking shared lock and its release (2 `flock` calls; a third read
  /// would add 2); with the watch and no change, the record the check verified is reused and no
  /// lock is taken at all. Whole, streamed and `keys()`.
  @Test(arguments: [false, true])
  func aSealedReaderLocksTheMarkOnlyForItsRechecks(changeWatch: Bool) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let storeFaults = SyscallFaultPlan(allowsChangeWatch: changeWatch)
    let provider = FileSealingKeyProvider(path: f.keyPath, faults: nil, settle: .zero)
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: f.store, faults: storeFaults, sealing: provider),
      marks: FileClockMarkStore(atPath: f.store, faults: storeFaults, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
    // The first operation of a store value takes the locked path; the second (the open) keeps
    // the files open and verifies the record there.
    #expect(gate.checkEligibility().isFresh)
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("the sealed store did not open")
      return
    }
    let key = CacheItemKey("token")
    let perRecordRead = changeWatch ? 0 : 2
    for _ in 0..<3 {
      storeFaults.resetCounts()
      #expect(try reader.item(forKey: key)?.payload == Data("value".utf8))
      #expect(storeFaults.count(of: .flock) == 2 * perRecordRead)
      storeFaults.resetCounts()
      var streamed = Data()
      _ = try reader.read(key) { streamed.append(contentsOf: $0) }
      #expect(streamed == Data("value".utf8))
      // A streamed read also judges again just before its first byte (after the checksum pass).
      #expect(storeFaults.count(of: .flock) == 3 * perRecordRead)
      storeFaults.resetCounts()
      #expect(try reader.keys() == [key])
      #expect(storeFaults.count(of: .flock) == 2 * perRecordRead)
    }
  }

  /// A binding that does not name the set (another store id at the same generation, another
  /// generation) is not trusted: the store reads the record and judges the set against it, as a
  /// read without a binding does.
  @Test func aStaleBindingFallsBackToTheRecord() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "value"])
    let faults = SyscallFaultPlan()
    let provider = FileSealingKeyProvider(path: f.keyPath, faults: nil, settle: .zero)
    let store = DirectoryCacheStore(atPath: f.store, faults: faults, sealing: provider)
    let (record, storeID) = try FileClockMarkStore(atPath: f.store, sealing: provider)
      .readSealed()
    let id = try #require(storeID)
    let key = CacheItemKey("token")
    faults.resetCounts()
    let right = MarkBinding(generation: record.generation, storeID: id)
    #expect(try store.item(forKey: key, boundTo: right)?.payload == Data("value".utf8))
    #expect(faults.count(of: .flock) == 0)
    let otherStore = MarkBinding(
      generation: record.generation, storeID: [UInt8](repeating: 9, count: id.count))
    faults.resetCounts()
    #expect(try store.item(forKey: key, boundTo: otherStore)?.payload == Data("value".utf8))
    #expect(faults.count(of: .flock) == 1)
    let older = MarkBinding(generation: record.generation - 1, storeID: id)
    #expect(throws: StoreError.self) { try store.item(forKey: key, boundTo: older) }
  }

  @Test func anUnsealedStoreThatReadsFreshIsASealMismatch() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "sealed"])
    try FileManager.default.removeItem(atPath: f.store)
    try f.signIn(["token": "forged"], gate: try f.gate(sealed: false))
    #expect(try f.refusal(gate: try f.gate(sealed: false)) == nil, "it reads fresh unsealed")
    try expectRefused(f, "seal_mismatch")
    try recovers(f)
    #expect(try f.refusal() == nil)
  }

  @Test func aSealedStoreOpenedWithoutAKeyIsKeyRequired() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "sealed"])
    let before = try f.snapshot()
    #expect(try f.refusal(gate: try f.gate(sealed: false)) == "key_required")
    #expect(try f.snapshot() == before)
  }

  @Test func anotherKeyIsASealMismatchAndASignInReseals() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "sealed", "other": "also"])
    let other = f.root.path + "/other-key"
    _ = try FileSealingKeyProvider(path: other).loadOrCreateKey()
    let before = try f.snapshot()
    #expect(try f.refusal(gate: try f.gate(keyPath: other)) == "seal_mismatch")
    #expect(try f.snapshot() == before)
    // The key was lost: a sign-in with the new key re-seals; what the old key sealed is gone.
    try f.signIn(["token": "new"], gate: try f.gate(keyPath: other))
    #expect(try f.refusal(gate: try f.gate(keyPath: other)) == nil)
    #expect(try f.refusal("other", gate: try f.gate(keyPath: other)) == nil)
    #expect(!(try f.files.contains("cache/items/other")))
  }

  @Test func aMissingKeyIsRefusedOfflineAndNeverCreated() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "sealed"])
    try FileManager.default.removeItem(atPath: f.keyPath)
    #expect(try f.refusal() == "key_unavailable")
    #expect(!FileManager.default.fileExists(atPath: f.keyPath))
    try recovers(f)
  }

  /// Which problem the key has is a typed field of the store error, not only words.
  @Test func theKeyProblemIsTyped() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "sealed"])
    let key = try Data(contentsOf: URL(fileURLWithPath: f.keyPath))
    let problems: [(SealingKeyError.Code, () throws -> Void)] = [
      (.missing, { try FileManager.default.removeItem(atPath: f.keyPath) }),
      (
        .wrongSize,
        {
          try key.prefix(31).write(to: URL(fileURLWithPath: f.keyPath))
          chmod(f.keyPath, 0o600)
        }
      ),
      (.insecureMode, { chmod(f.keyPath, 0o644) }),
    ]
    for (code, damage) in problems {
      try? FileManager.default.removeItem(atPath: f.keyPath)
      try key.write(to: URL(fileURLWithPath: f.keyPath))
      chmod(f.keyPath, 0o600)
      try damage()
      let decision = try f.gate().checkEligibility()
      #expect(decision.markError?.code == .keyUnavailable, "\(code)")
      #expect(decision.markError?.keyProblem == code, "\(String(describing: decision.markError))")
      #expect(decision.cacheError?.keyProblem == code, "\(code)")
    }
    // Not a key problem: no key problem.
    #expect(StoreError(code: .unreadable, message: "x").keyProblem == nil)
  }

  @Test func theWholeScenarioExpireRollBackTwiceAndRecover() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "secret"])
    #expect(try f.gate().checkEligibility().status == .fresh)
    f.clock.advance(by: .seconds(86_401))
    #expect(try f.gate().checkEligibility().reasons.contains(.tooOld))
    for _ in 0..<2 {
      f.clock.moveBack(by: .seconds(86_400))
      let decision = try f.gate().checkEligibility()
      #expect(decision.status == .expired)
      #expect(decision.reasons.contains(.clockBehindMark))
    }
    try f.signIn(["token": "renewed"])
    #expect(try f.refusal() == nil)
  }

  // MARK: The staged sign-in on a sealed store

  /// A gate over the fixture's store whose item store fails every `rename`: its sign-ins stage
  /// and commit (the mark reset) but cannot roll forward.
  func gateThatCannotRollForward(_ f: Fixture) throws -> OfflineAccessGate {
    let plan = SyscallFaultPlan()
    plan.fail(.renameat, occurrence: nil, with: .ioError)
    let provider = FileSealingKeyProvider(path: f.keyPath)
    return OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: f.store, faults: plan, sealing: provider),
      marks: FileClockMarkStore(atPath: f.store, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
  }

  func payload(_ f: Fixture, _ key: String) throws -> String? {
    guard case .opened(let reader) = try f.gate().openOffline() else { return "refused" }
    return try reader.item(forKey: CacheItemKey(key)).map {
      String(decoding: $0.payload, as: UTF8.self)
    }
  }

  @Test func aCommittedStagingIsReadUntilItsRollForwardAndTheNextSignInFinishesIt() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "old", "gone": "old"])
    f.clock.advance(by: .seconds(60))
    // Committed (the reset ran), not rolled forward: the session is valid.
    var changes = [(CacheItemKey("token"), Data("new".utf8))]
    changes.append((CacheItemKey("added"), Data("new".utf8)))
    _ = try gateThatCannotRollForward(f).beginOnlineSession(writing: changes)
    let names = try FileManager.default.contentsOfDirectory(atPath: f.store + "/cache")
    #expect(names.contains("pending"))
    #expect(names.contains { $0.hasPrefix("next-") })
    #expect(try payload(f, "token") == "new")
    #expect(try payload(f, "added") == "new")
    #expect(try payload(f, "gone") == "old", "items not named are kept")
    #expect(try f.gate().cache.keys().map(\.rawValue) == ["added", "gone", "token"])
    // The next sign-in rolls it forward, then commits its own.
    try f.signIn(["other": "later"])
    #expect(try payload(f, "token") == "new")
    #expect(try payload(f, "other") == "later")
    let after = try FileManager.default.contentsOfDirectory(atPath: f.store + "/cache")
    #expect(!after.contains { $0.hasPrefix("next-") || $0 == "pending" }, "\(after)")
  }

  @Test func anUncommittedStagingIsNeverReadAndIsRemovedByTheNextSignIn() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    // The reset fails (its fdatasync): the staging of the next generation stays, uncommitted.
    let plan = SyscallFaultPlan()
    plan.fail(.fdatasync, occurrence: 1, with: .ioError)
    let provider = FileSealingKeyProvider(path: f.keyPath)
    let failing = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: f.store, sealing: provider),
      marks: FileClockMarkStore(atPath: f.store, faults: plan, sealing: provider),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
      clock: f.clock)
    #expect(throws: OnlineSessionError.self) {
      _ = try failing.beginOnlineSession(writing: [(try CacheItemKey("token"), Data("new".utf8))])
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: f.store + "/cache")
    #expect(names.contains { $0.hasPrefix("next-") }, "\(names)")
    #expect(try payload(f, "token") == "old")
    try f.signIn(["other": "x"])
    #expect(try payload(f, "token") == "old")
    let after = try FileManager.default.contentsOfDirectory(atPath: f.store + "/cache")
    #expect(!after.contains { $0.hasPrefix("next-") || $0 == "pending" }, "\(after)")
  }

  /// The staging of a committed sign-in, tampered with: a flipped byte of its index or of a
  /// staged item, or `pending` removed, is refused with its typed reason and never served as
  /// valid; a sign-in recovers.
  @Test(arguments: ["index", "item", "pending-removed", "pending-added"])
  func aTamperedStagingIsRefusedOrHarmless(_ what: String) throws {
    let f = try Fixture()
    defer { f.root.remove() }
    try f.signIn(["token": "old"])
    f.clock.advance(by: .seconds(60))
    _ = try gateThatCannotRollForward(f).beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("new".utf8))])
    let staging = try #require(
      try FileManager.default.contentsOfDirectory(atPath: f.store + "/cache")
        .first { $0.hasPrefix("next-") })
    switch what {
    case "index":
      try f.flip("cache/\(staging)/index", at: 100)
      try expectRefused(f, "index_unauthentic")
    case "item":
      try f.flip("cache/\(staging)/items/token", at: 60)
      try expectRefused(f, "item_unauthentic")
    case "pending-removed":
      try FileManager.default.removeItem(atPath: f.store + "/cache/pending")
      try expectRefused(f, "index_unauthentic")
    default:
      // A settled store with `pending` added: the live set is still the one read.
      try f.signIn(["token": "settled"])
      #expect(FileManager.default.createFile(atPath: f.store + "/cache/pending", contents: nil))
      #expect(try payload(f, "token") == "settled")
    }
    try recovers(f)
  }

  @Test func sessionWritesDeletesAndSignOutOnASealedStore() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let session = try f.gate().beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("one".utf8))])
    try session.write(CacheItemKey("profile"), Data("two".utf8))
    #expect(try payload(f, "token") == "one")
    #expect(try payload(f, "profile") == "two")
    try session.delete(CacheItemKey("token"))
    #expect(try payload(f, "token") == nil)
    #expect(try payload(f, "profile") == "two")
    try session.signOut()
    #expect(try f.gate().checkEligibility().status == .unavailable)
  }

  /// Session writes on a sealed store are staged for the mark's generation: readers running
  /// beside them see the old or the new item, never a refusal (before, an item renamed in ahead
  /// of its index was `item_unauthentic` to a concurrent reader).
  @Test func concurrentReadersNeverSeeASealedSessionWriteHalfDone() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let session = try f.gate().beginOnlineSession(
      writing: [(CacheItemKey("token"), Data("v0".utf8)), (CacheItemKey("gone"), Data())])
    let rounds = 60
    final class Shared: Sendable {
      let failures = Mutex<[String]>([])
      let done = Atomic<Bool>(false)
      func fail(_ what: String) { failures.withLock { $0.append(what) } }
    }
    let shared = Shared()
    let store = f.store
    let keyPath = f.keyPath
    let clock = f.clock
    // Reader threads (not tasks: two busy tasks could hold the whole cooperative pool).
    let readers = DispatchGroup()
    for _ in 0..<2 {
      DispatchQueue.global().async(group: readers) {
        let provider = FileSealingKeyProvider(path: keyPath)
        while !shared.done.load(ordering: .acquiring) {
          do {
            let gate = OfflineAccessGate(
              cache: DirectoryCacheStore(atPath: store, sealing: provider),
              marks: FileClockMarkStore(atPath: store, sealing: provider),
              policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
              clock: clock)
            guard case .opened(let reader) = gate.openOffline() else {
              shared.fail("refused")
              continue
            }
            let token = try reader.item(forKey: CacheItemKey("token"))
            guard let token, String(decoding: token.payload, as: UTF8.self).hasPrefix("v") else {
              shared.fail("token missing")
              continue
            }
            _ = try reader.item(forKey: CacheItemKey("gone"))
          } catch {
            shared.fail("\(error)")
          }
        }
      }
    }
    for round in 1...rounds {
      do {
        try session.write(CacheItemKey("token"), Data("v\(round)".utf8))
        if round == rounds / 2 { try session.delete(CacheItemKey("gone")) }
      } catch {
        shared.fail("writer: \(error)")
      }
    }
    shared.done.store(true, ordering: .releasing)
    readers.wait()
    #expect(shared.failures.withLock { $0 } == [])
    #expect(try payload(f, "token") == "v\(rounds)")
    #expect(try payload(f, "gone") == nil)
    // Nothing staged is left behind.
    #expect(!f.files.contains { $0.hasPrefix("cache/next-") || $0 == "cache/pending" })
  }

  /// A sealed session write that fails at any system call leaves the old set or the new set,
  /// whole: every item reads (old or new, never refused), and the same session's next write
  /// succeeds and is read back.
  @Test func aSealedSessionWriteFailingAtAnyStepLeavesTheOldOrTheNewSet() throws {
    let f = try Fixture()
    defer { f.root.remove() }
    let provider = FileSealingKeyProvider(path: f.keyPath)
    func session(_ faults: SyscallFaultPlan) throws -> OnlineSession {
      let gate = OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: f.store, faults: faults, sealing: provider),
        marks: FileClockMarkStore(atPath: f.store, sealing: provider),
        policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false),
        clock: f.clock)
      return try gate.beginOnlineSession()
    }
    func reset() throws {
      let reset = try f.gate().beginOnlineSession(
        writing: [
          (CacheItemKey("token"), Data("old".utf8)),
          (CacheItemKey("other"), Data("kept".utf8)),
        ])
      try reset.delete(CacheItemKey("added"))
    }
    func commit(_ session: OnlineSession) throws {
      try session.write(contentsOf: [
        (CacheItemKey("token"), Data("new".utf8)),
        (CacheItemKey("added"), Data("new".utf8)),
      ])
    }
    func seen() -> [String] {
      ["token", "other", "added"].map { key in
        do {
          return try payload(f, key) ?? "absent"
        } catch {
          return "error: \(error)"
        }
      }
    }
    try reset()
    let tracing = SyscallFaultPlan()
    let first = try session(tracing)
    tracing.resetCounts()
    try commit(first)
    let trace = tracing.trace
    #expect(trace.count > 10)
    for index in trace.indices {
      try reset()
      let faults = SyscallFaultPlan()
      let current = try session(faults)
      faults.resetCounts()
      let (kind, occurrence) = tracing.occurrence(at: index)
      faults.fail(kind, occurrence: occurrence, with: .ioError, timing: .afterCall)
      _ = try? commit(current)
      let after = seen()
      #expect(
        after == ["old", "kept", "absent"] || after == ["new", "kept", "new"],
        "failing \(kind) #\(occurrence) (step \(index)) left \(after)")
      faults.removeAllFaults()
      try commit(current)
      #expect(seen() == ["new", "kept", "new"])
    }
  }
}
