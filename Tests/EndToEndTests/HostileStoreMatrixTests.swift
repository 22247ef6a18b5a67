import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The hostile-store matrix, run on the built binary: files of every type in every position of a
/// store, sizes, owners and modes, spellings of a linked store, replayed files and crafted
/// records. For every case, every command runs under a timeout and must not hang, crash, answer
/// fresh (or serve bytes) wrongly, or write anything outside the store; then an online
/// `sign-in` must recover every state that is corruption (not an insecure owner or mode, which
/// is refused with exit 74 until the user fixes it).
@Suite struct HostileStoreMatrixTests {
  let binary: BinaryRunner

  init() throws {
    binary = try BinaryRunner()
  }

  /// Runs one command of the matrix: bounded, never killed by a signal, exit code among `allowed`.
  @discardableResult
  func run(
    _ arguments: [String], allowed: Set<Int32>, _ label: String, launcher: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> BinaryResult {
    check(
      try binary.run(arguments, launcher: launcher), arguments,
      allowed: allowed, label, sourceLocation: sourceLocation)
  }

  /// The matrix's checks of one command's result: it did not hang, was not killed by a signal,
  /// and exited with a code among `allowed`.
  @discardableResult
  func check(
    _ result: BinaryResult, _ arguments: [String], allowed: Set<Int32>, _ label: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> BinaryResult {
    #expect(!result.timedOut, "\(label): \(arguments) hung", sourceLocation: sourceLocation)
    #expect(
      result.exitCode != nil, "\(label): \(arguments) crashed", sourceLocation: sourceLocation)
    if let code = result.exitCode {
      #expect(
        allowed.contains(code),
        "\(label): \(arguments) exited \(code), allowed \(allowed.sorted()): \(result.standardError)",
        sourceLocation: sourceLocation)
    }
    return result
  }

  @Test(arguments: HostileCase.corruptions)
  func everyCorruptionIsRefusedWithoutHangAndSignInRecovers(_ hostile: HostileCase) throws {
    try refusedWithoutHangThenRecovered(hostile, sealed: false)
  }

  /// The same for a sealed store (`--seal file:<key>`), in every position its sign-in and
  /// commit write (`tmp/`, `tmp/index`, `index`, `items/`, an item, `pending`, the stagings):
  /// no open waits on a FIFO, and a plain sign-in repairs exactly as the unsealed one does.
  @Test(arguments: HostileCase.sealedCorruptions)
  func everySealedCorruptionIsRefusedWithoutHangAndSignInRecovers(_ hostile: HostileCase) throws {
    try refusedWithoutHangThenRecovered(hostile, sealed: true)
  }

  /// A file of the wrong type where a sealed store's index or item belongs is refused by the
  /// offline reads as `not_a_regular_file` naming its path (the secure open, as in the unsealed
  /// store), never read as an unauthentic index or waited on; a plain sealed sign-in recovers.
  @Test(arguments: SealedWrongType.cases)
  func aSealedFileOfTheWrongTypeIsNotARegularFileAndSignInRecovers(_ hostile: SealedWrongType)
    throws
  {
    let scene = try Scene(binary: binary, sealed: true)
    defer { scene.remove() }
    try scene.replace(hostile.position, with: hostile.kind)
    let label = "sealed: \(hostile)"
    let path = scene.path(hostile.position)
    let status = try run(
      scene.status + ["--json"], allowed: hostile.position == "cache/index" ? [1] : [0], label)
    if hostile.position == "cache/index" {
      let error = (try? status.jsonObject()["item_error"] as? String) ?? ""
      #expect(error.hasPrefix("not_a_regular_file: \(path)"), "\(label): \(status.standardOutput)")
    }
    let read = try run(scene.read("token"), allowed: [1], label)
    #expect(read.standardOutput.isEmpty, "\(label): bytes served")
    #expect(
      read.standardError.contains("(not_a_regular_file: \(path)"), "\(label): \(read.standardError)"
    )
    try run(scene.signIn([]), allowed: [0], label)
    let index = hostile.position == "cache/index"
    try run(scene.status, allowed: index ? [2] : [0], label + " after sign-in")
    // An item of the wrong type is removed by the sign-in. Without an index no old item is
    // carried: one the index does not vouch for may be an old copy put back.
    try run(scene.read("token"), allowed: [2], label + " after sign-in")
    let other = try run(scene.read("other"), allowed: index ? [2] : [0], label)
    if !index { #expect(other.standardOutput == "other", "\(label)") }
  }

  /// A sealed store's file or directory that another user owns or that group or others may
  /// write is `insecure_store` naming it, exit 74, as in the unsealed store: `items/`, the index,
  /// an item, a committed staging. A plain sealed sign-in then recovers what it replaces (the
  /// index, an item) and refuses (74) a directory it would have to trust until the user fixes it.
  @Test(arguments: HostileCase.sealedInsecure)
  func everySealedInsecureOwnerOrModeIsRefusedWith74(_ hostile: HostileCase) throws {
    let scene = try Scene(binary: binary, sealed: true)
    defer { scene.remove() }
    try hostile.make(scene)
    let outside = scene.outsideSnapshot()
    let label = hostile.name
    let status = try run(scene.status, allowed: hostile.statusBefore, label)
    if status.exitCode == 74 {
      #expect(status.standardOutput.contains("insecure_store: \(scene.store)/"), "\(label)")
    }
    let read = try run(scene.read("token"), allowed: hostile.readBefore, label)
    #expect(read.standardOutput.isEmpty, "\(label): bytes served")
    if read.exitCode == 74 {
      #expect(read.standardError.contains("insecure_store: \(scene.store)/"), "\(label)")
    }
    try run(scene.signIn([]), allowed: hostile.signInAllowed, label)
    if hostile.signInAllowed == [0] {
      // Recovered: nothing insecure is left, and what is left reads.
      // (No item left when the index was the insecure file: nothing vouched for them.)
      try run(scene.status, allowed: [0, 2], label + " after sign-in")
      try run(scene.read("token"), allowed: [0, 2], label + " after sign-in")
      try run(scene.signIn(["token"]), allowed: [0], label)
      let after = try run(scene.read("token"), allowed: [0], label + " after sign-in --put")
      #expect(after.standardOutput == Scene.newPayload, "\(label)")
    }
    #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
  }

  /// What stands at the mark's temporary name (`clock-mark.tmp`: a directory tree, a FIFO, a
  /// link, ...) with the record missing or unreadable never blocks `mark reset`, which replaces
  /// the record, and the record then reads back.
  @Test(arguments: SpecialFile.allCases)
  func anythingAtTheMarkTemporaryNameNeverBlocksAReset(_ kind: SpecialFile) throws {
    for record in ["missing", "garbage"] {
      let scene = try Scene(binary: binary)
      defer { scene.remove() }
      let label = "\(kind) at clock-mark.tmp, clock-mark \(record)"
      try scene.breakRecord(record)
      try scene.replace(FileClockMarkStore.temporaryFileName, with: kind)
      let outside = scene.outsideSnapshot()
      try run(["mark", "reset", "--dir", scene.store, "--now", "4000000000"], allowed: [0], label)
      let shown = try run(
        ["mark", "show", "--dir", scene.store, "--unit", "s"], allowed: [0], label)
      #expect(shown.standardOutput.contains("4000000000"), "\(label): \(shown.standardOutput)")
      #expect(!scene.exists(FileClockMarkStore.temporaryFileName), "\(label): left behind")
      #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
    }
  }

  /// A hostile case made in a new scene, with the outside snapshot taken after it was made and
  /// what the first offline `status` and `read token` answered (each bounded, its exit code
  /// among the case's; a `read` that succeeds served the right bytes). The caller removes
  /// ``Prepared/scene``.
  struct Prepared {
    let scene: Scene
    let outside: [String: String]
    let label: String
    let status: BinaryResult
    let read: BinaryResult
  }

  /// Makes `hostile` in a new scene (sealed or not) and runs the first offline `status` and
  /// `read token`; see ``Prepared``. The scene is removed when anything here fails.
  func prepared(_ hostile: HostileCase, sealed: Bool = false) throws -> Prepared {
    let scene = try Scene(binary: binary, sealed: sealed)
    do {
      try hostile.make(scene)
      let outside = scene.outsideSnapshot()
      let label = hostile.name
      let status = try run(scene.status, allowed: hostile.statusBefore, label)
      let read = try run(scene.read("token"), allowed: hostile.readBefore, label)
      if read.exitCode == 0 {
        #expect(read.standardOutput == Scene.tokenPayload, "\(label): wrong bytes served")
      }
      return Prepared(scene: scene, outside: outside, label: label, status: status, read: read)
    } catch {
      scene.remove()
      throw error
    }
  }

  /// The matrix's run of one corruption: offline checks are bounded and never serve wrong bytes
  /// or remove a staging; a plain sign-in recovers (no staging, no `pending` left, a generation
  /// above 0, fresh unless the corruption took every item); a sign-in with `--put` serves the
  /// new bytes; nothing outside the store changes.
  func refusedWithoutHangThenRecovered(_ hostile: HostileCase, sealed: Bool) throws {
    let prepared = try self.prepared(hostile, sealed: sealed)
    let (scene, outside, label) = (prepared.scene, prepared.outside, prepared.label)
    defer { scene.remove() }
    // Offline checks never reclaim a sign-in's staging: only a sign-in does.
    if hostile.keepsStaging {
      #expect(!scene.stagings().isEmpty, "\(label): an offline check removed the staging")
      #expect(scene.exists("cache/pending"), "\(label): an offline check removed pending")
    }
    // A plain sign-in recovers: a consistent store that reads fresh (or, when every item was
    // lost with the corruption, unavailable) and never a generation of 0.
    let signIn = try run(scene.signIn([]), allowed: [0], label)
    if signIn.exitCode == 0 {
      let generation = try signIn.jsonInt64("generation")
      #expect(generation > 0, "\(label): generation wrapped to \(generation)")
    }
    #expect(scene.stagings() == [], "\(label): a staging was left after the sign-in")
    #expect(!scene.exists("cache/pending"), "\(label): pending was left after the sign-in")
    try run(scene.status, allowed: hostile.itemsLost ? [0, 2] : [0], label + " after sign-in")
    // A sign-in with --put recovers everything and the new item reads back.
    try run(scene.signIn(["token"]), allowed: [0], label)
    #expect(scene.stagings() == [], "\(label): a staging was left after the sign-in --put")
    #expect(!scene.exists("cache/pending"), "\(label): pending was left after sign-in --put")
    try run(scene.status, allowed: [0], label + " after sign-in --put")
    let after = try run(scene.read("token"), allowed: [0], label + " after sign-in --put")
    #expect(after.standardOutput == Scene.newPayload, "\(label)")
    #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
  }

  @Test(arguments: HostileCase.insecure)
  func everyInsecureOwnerOrModeIsRefusedWith74(_ hostile: HostileCase) throws {
    let prepared = try self.prepared(hostile)
    let (scene, outside, label) = (prepared.scene, prepared.outside, prepared.label)
    defer { scene.remove() }
    if prepared.status.exitCode == 74 {
      let text = prepared.status.standardOutput + prepared.status.standardError
      #expect(text.contains("insecure_store"), "\(label): \(text)")
    }
    try run(scene.signIn(["token"]), allowed: hostile.signInAllowed, label)
    #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
  }

  @Test(arguments: ["link", "link/", "link/.", "link//./", "./link"])
  func noSpellingOfALinkedStoreIsFollowed(_ spelling: String) throws {
    let scene = try Scene(binary: binary)
    defer { scene.remove() }
    try FileManager.default.createSymbolicLink(
      atPath: scene.root + "/link", withDestinationPath: scene.store)
    let before = Scene.snapshot(scene.store)
    let launcher = ["sh", "-c", #"cd "$0" && exec "$@""#, scene.root]
    let store = spelling.hasPrefix("./") ? spelling : scene.root + "/" + spelling
    for arguments in [
      ["status", "--store", store, "--max-age", "7d"],
      ["read", "--store", store, "--max-age", "7d", "token"],
      ["sign-in", "--store", store],
      ["sign-in", "--store", store, "--put", "token=\(scene.newInput)"],
      ["mark", "show", "--dir", store],
      ["mark", "observe", "--dir", store, "--now", "4000000000"],
      ["mark", "reset", "--dir", store, "--now", "4000000000"],
    ] {
      let result = try run(arguments, allowed: [1, 74], spelling, launcher: launcher)
      #expect(result.standardOutput == "", "\(spelling): \(arguments)")
    }
    #expect(Scene.snapshot(scene.store) == before, "\(spelling): the linked store changed")
  }

  /// A store, and a sealed store's key file, whose directory just above is a symbolic link:
  /// every command works through the link (only the last name is never followed), and the
  /// files land in the link's target.
  @Test(arguments: [false, true])
  func aStoreBelowALinkedParentIsUsedThroughIt(_ sealed: Bool) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-parent-link")
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.appending("real"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.appending("link"), withDestinationPath: scratch.appending("real"))
    let input = scratch.appending("input")
    try Data("through the link".utf8).write(to: URL(fileURLWithPath: input))
    let store = scratch.appending("link/store")
    let seal = sealed ? ["--seal", "file:" + scratch.appending("link/store.key")] : []
    let label = sealed ? "sealed" : "unsealed"
    try run(
      ["sign-in", "--store", store, "--put", "token=\(input)"] + seal, allowed: [0], label)
    let status = try run(
      ["status", "--store", store, "--max-age", "7d"] + seal, allowed: [0], label)
    #expect(status.standardOutput.hasPrefix("status: fresh"), "\(label): \(status.standardOutput)")
    let read = try run(
      ["read", "--store", store, "--max-age", "7d", "token"] + seal, allowed: [0], label)
    #expect(read.standardOutput == "through the link", "\(label)")
    #expect(FileManager.default.fileExists(atPath: scratch.appending("real/store/cache/index")))
    #expect(
      FileManager.default.fileExists(atPath: scratch.appending("real/store.key")) == sealed)
  }

  /// `--store link/..` would make whatever directory is above the link's target a store (the
  /// kernel follows the link before the `..`): every command refuses it, names the cause, and
  /// nothing is made there or anywhere else.
  @Test func aStorePathEndingInParentNameIsRefusedByEveryCommand() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-dotdot")
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.appending("elsewhere/target"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.appending("link"), withDestinationPath: scratch.appending("elsewhere/target"))
    let input = scratch.appending("input")
    try Data("payload".utf8).write(to: URL(fileURLWithPath: input))
    let before = try FileManager.default.subpathsOfDirectory(atPath: scratch.path).sorted()
    for spelling in ["link/..", "link/../"] {
      let store = scratch.appending(spelling)
      let commands: [([String], Set<Int32>)] = [
        (["sign-in", "--store", store, "--put", "token=\(input)"], [74]),
        (["status", "--store", store, "--max-age", "7d"], [74]),
        (["read", "--store", store, "--max-age", "7d", "token"], [74]),
        (["mark", "show", "--dir", store], [74]),
      ]
      for (arguments, exitCodes) in commands {
        let result = try run(arguments, allowed: exitCodes, spelling)
        #expect(
          result.standardError.contains("ends in '..'")
            || result.standardOutput.contains("ends in '..'"),
          "\(arguments): \(result.standardOutput) \(result.standardError)")
        #expect(!result.standardOutput.contains("payload"), "\(arguments): served")
      }
    }
    #expect(try FileManager.default.subpathsOfDirectory(atPath: scratch.path).sorted() == before)
  }

  /// A sealed `mark reset` keeps the items, so it never makes a key and never seals the store
  /// again with another one: a mistyped key path (no such key) is `key_unavailable`, another
  /// existing key is `seal_mismatch` (exit 1 both); nothing is written, no key is made, and
  /// the store still reads with its own key. With the right key the reset works and keeps both
  /// items.
  @Test func aSealedMarkResetNeverMakesOrChangesTheKey() throws {
    let scene = try Scene(binary: binary, sealed: true)
    defer { scene.remove() }
    let other = scene.root + "/other.key"
    let otherKey = Data((0..<32).map { UInt8($0) })
    #expect(
      FileManager.default.createFile(
        atPath: other, contents: otherKey, attributes: [.posixPermissions: 0o600]))
    let before = Scene.snapshot(scene.store)
    let cases: [(key: String, exitCode: Int32, reason: String)] = [
      (scene.root + "/seal.kye", 1, "key_unavailable"), (other, 1, "seal_mismatch"),
    ]
    for (key, exitCode, reason) in cases {
      let result = try run(
        ["mark", "reset", "--store", scene.store, "--now", "4000000000", "--seal", "file:" + key],
        allowed: [exitCode], key)
      #expect(result.standardError.contains(reason), "\(key): \(result.standardError)")
      #expect(result.standardError.contains("mark reset"), "\(key): \(result.standardError)")
      #expect(Scene.snapshot(scene.store) == before, "\(key): the store changed")
    }
    #expect(!FileManager.default.fileExists(atPath: scene.root + "/seal.kye"), "a key was made")
    #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == otherKey)
    let now = String(Int(Date().timeIntervalSince1970))
    try run(
      ["mark", "reset", "--store", scene.store, "--now", now] + scene.seal,
      allowed: [0], "the store's own key")
    for key in ["token", "other"] {
      let read = try run(
        ["read", "--store", scene.store, "--max-age", "7d", "--no-boot-floor", key] + scene.seal,
        allowed: [0], "read \(key) after the reset (which anchors no boot-clock floor)")
      #expect(!read.standardOutput.isEmpty, "\(key)")
    }
  }

  /// A key named without a directory (`--seal file:k`, beside the working directory) crashed
  /// every sealed command (Foundation's `deletingLastPathComponent` traps on it): each now works,
  /// and a key path ending in `/` is refused without leaving a file behind.
  @Test func aKeyNamedWithoutADirectoryIsUsed() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-bare-key")
    defer { scratch.remove() }
    let input = scratch.appending("input")
    try Data("bare".utf8).write(to: URL(fileURLWithPath: input))
    let inScratch = ["/usr/bin/env", "-C", scratch.path]
    let seal = ["--seal", "file:k"]
    try run(
      ["sign-in", "--store", "S", "--put", "token=\(input)"] + seal, allowed: [0], "sign-in",
      launcher: inScratch)
    let read = try run(
      ["read", "--store", "S", "--max-age", "7d", "token"] + seal, allowed: [0], "read",
      launcher: inScratch)
    #expect(read.standardOutput == "bare")
    try run(
      ["mark", "reset", "--store", "S", "--now", String(Int(Date().timeIntervalSince1970))]
        + seal, allowed: [0], "mark reset", launcher: inScratch)
    try run(
      ["status", "--store", "S", "--max-age", "7d", "--no-boot-floor"] + seal, allowed: [0],
      "status", launcher: inScratch)
    #expect(FileManager.default.fileExists(atPath: scratch.appending("k")))
    try FileManager.default.createDirectory(
      atPath: scratch.appending("kd"), withIntermediateDirectories: false)
    try run(
      ["sign-in", "--store", "T", "--put", "token=\(input)", "--seal", "file:kd/newkey/"],
      allowed: [1, 74], "trailing slash", launcher: inScratch)
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.appending("kd")) == [])
  }

  @Test func aReplayedOlderItemIsNeverServedAsFresh() throws {
    let scene = try Scene(binary: binary)
    defer { scene.remove() }
    let old = scene.root + "/old-token"
    try FileManager.default.copyItem(atPath: scene.store + "/cache/items/token", toPath: old)
    usleep(20_000)
    // A later sign-in rewrites every item: the old copy is older than the oldest item judged.
    try run(scene.signIn(["token", "other"]), allowed: [0], "replay")
    // Copied back over the newer item in place: the items directory does not change.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: old))
    let handle = try #require(FileHandle(forWritingAtPath: scene.store + "/cache/items/token"))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: bytes)
    try handle.close()
    try run(scene.status, allowed: [0], "replay: status stays O(1) and fresh")
    let read = try run(scene.read("token"), allowed: [1], "replay")
    #expect(read.standardOutput == "")
    #expect(read.standardError.contains("too_old"), "\(read.standardError)")
    let verify = try run(scene.status + ["--verify"], allowed: [1], "replay --verify")
    #expect(verify.standardOutput.contains("disagrees: token: too_old"), "\(verify.standardOutput)")
    // The text never says fresh beside exit 1 (outside test 2, F9).
    #expect(
      verify.standardOutput.hasPrefix(
        "status: expired (the index reads fresh, but 1 of 2 items disagree under --verify)\n"
          + "reasons: item_unreadable\n"), "\(verify.standardOutput)")
    #expect(verify.standardOutput.contains("\ndeadline: none\n"), "\(verify.standardOutput)")
    // Nor does the JSON (outside test, session 12): the same answer as the text and the exit.
    let json = try run(scene.status + ["--verify", "--json"], allowed: [1], "replay --json")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    #expect(object["status"] as? String == "expired", "\(json.standardOutput)")
    #expect(object["reasons"] as? [String] == ["item_unreadable"], "\(json.standardOutput)")
    #expect(object["deadline"] is NSNull, "\(json.standardOutput)")
    #expect(object["index_status"] as? String == "fresh", "\(json.standardOutput)")
    let checked = (object["verify"] as? [String: Any])?["checked"] as? Int
    #expect(checked == 2, "\(json.standardOutput)")
    // Where every item agrees, the JSON has no override.
    try run(scene.signIn(["token", "other"]), allowed: [0], "sign-in again")
    let agreeing = try run(scene.status + ["--verify", "--json"], allowed: [0], "agreeing")
    let fresh = try #require(
      try JSONSerialization.jsonObject(with: Data(agreeing.standardOutput.utf8))
        as? [String: Any])
    #expect(fresh["status"] as? String == "fresh", "\(agreeing.standardOutput)")
    #expect(fresh["index_status"] == nil, "\(agreeing.standardOutput)")
  }

  /// This machine's id made unreadable in a private mount namespace (each kind of file over
  /// `/etc/machine-id` and over its fallback `/var/lib/dbus/machine-id` where that exists): no
  /// hang, no crash; a record bound at sign-in is refused (`store_from_another_machine`) and
  /// left byte for byte; a sign-in there writes an unbound record, judged as before binding
  /// existed there and here; a sign-in where the id can be read binds it again.
  @Test(
    .enabled(if: MountNamespace.isUsable, "needs unshare (util-linux) with user+mount namespaces"),
    .enabled(if: machineIDFileIsPresent, "needs /etc/machine-id (a regular file) to bind over"),
    arguments: MachineIDKind.allCases)
  func everyUnreadableMachineIDRefusesABoundRecordAndASignInThereWritesItUnbound(
    _ kind: MachineIDKind
  ) throws {
    let scene = try Scene(binary: binary)
    defer { scene.remove() }
    let here = SystemMachineIdentity().current()
    try #require(here != nil, "this machine's id cannot be read outside the namespace")
    #expect(try FileClockMarkStore(atPath: scene.store).read().machine == here)
    let bindings = try kind.bindings(scratch: scene.root + "/machine-id-" + kind.rawValue)
    let outside = scene.outsideSnapshot()
    let before = Scene.snapshot(scene.store)
    let label = "machine id: \(kind.rawValue)"
    @discardableResult func inside(_ arguments: [String], allowed: Set<Int32>) throws
      -> BinaryResult
    {
      check(
        try MountNamespace.run(arguments, binding: bindings), arguments,
        allowed: allowed, label)
    }
    let status = try inside(scene.status + ["--json"], allowed: [1])
    let error = (try? status.jsonObject()["mark_error"] as? String) ?? ""
    #expect(error.hasPrefix("store_from_another_machine:"), "\(label): \(status.standardOutput)")
    let read = try inside(scene.read("token"), allowed: [1])
    #expect(read.standardOutput.isEmpty, "\(label): bytes served")
    #expect(read.standardError.contains("store_from_another_machine"), "\(label)")
    #expect(Scene.snapshot(scene.store) == before, "\(label): a refused check changed the store")
    try inside(scene.signIn([]), allowed: [0])
    #expect(try FileClockMarkStore(atPath: scene.store).read().machine == nil, "\(label)")
    try inside(scene.status, allowed: [0])
    let unbound = try inside(scene.read("token"), allowed: [0])
    #expect(unbound.standardOutput == Scene.tokenPayload, "\(label)")
    try run(scene.status, allowed: [0], label + " outside, unbound")
    try run(scene.signIn([]), allowed: [0], label + " outside")
    #expect(try FileClockMarkStore(atPath: scene.store).read().machine == here, "\(label)")
    #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
  }

  /// A sealed store (its key in a file outside it) with a sparse 1 TiB file where an item or
  /// the index belongs: no command allocates the file's size (a crash, before), nothing but the
  /// right bytes is served, and a sign-in recovers.
  @Test(arguments: ["cache/items/token", "cache/items/other", "cache/index"])
  func aSparseOneTebibyteFileInASealedStoreIsNeverAllocated(_ position: String) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-sealed-sparse")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let seal = ["--seal", "file:" + scratch.appending("key")]
    let input = scratch.appending("input")
    try Data(Scene.tokenPayload.utf8).write(to: URL(fileURLWithPath: input))
    let label = "sealed, 1 TiB at \(position)"
    try run(
      ["sign-in", "--store", store, "--put", "token=\(input)", "--put", "other=\(input)"] + seal,
      allowed: [0], label)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/" + position))
    try handle.truncate(atOffset: 1 << 40)
    try handle.close()
    let status = ["status", "--store", store, "--max-age", "7d"] + seal
    let read = ["read", "--store", store, "--max-age", "7d", "token"] + seal
    try run(status, allowed: [0, 1], label)
    let served = try run(read, allowed: position == "cache/items/token" ? [1] : [0, 1], label)
    if served.exitCode == 0 { #expect(served.standardOutput == Scene.tokenPayload, "\(label)") }
    try run(status + ["--verify"], allowed: position == "cache/index" ? [0, 1] : [1], label)
    try Data(Scene.newPayload.utf8).write(to: URL(fileURLWithPath: input))
    try run(["sign-in", "--store", store, "--put", "token=\(input)"] + seal, allowed: [0], label)
    let after = try run(read, allowed: [0], label + " after sign-in")
    #expect(after.standardOutput == Scene.newPayload, "\(label)")
  }

  @Test func aCraftedGenerationAtItsMaximumDoesNotWrapToZero() throws {
    let scene = try Scene(binary: binary)
    defer { scene.remove() }
    try scene.craftGeneration(.max)
    let signIn = try run(scene.signIn([]), allowed: [0], "generation max")
    #expect(try signIn.jsonInt64("generation") == 1)
    try run(scene.status, allowed: [0], "generation max")
  }
}

/// One hostile state of a store, with the exit codes each command may give before recovery.
struct HostileCase: CustomTestStringConvertible, Sendable {
  var name: String
  var statusBefore: Set<Int32>
  var readBefore: Set<Int32>
  /// Whether the corruption can take every item with it (then a plain sign-in may leave an
  /// empty, `unavailable`, store).
  var itemsLost = false
  var signInAllowed: Set<Int32> = [0]
  /// Whether the case holds a sign-in's staging (`cache/next-*` and `cache/pending`), which
  /// offline checks must leave in place: only a sign-in reclaims it.
  var keepsStaging = false
  let make: @Sendable (Scene) throws -> Void

  var testDescription: String { name }

  static let refused: Set<Int32> = [1, 74]

  /// Every wrong type in every position, sizes, junk and crafted files.
  static let corruptions: [HostileCase] = {
    var cases: [HostileCase] = []
    let positions: [(String, Bool)] = [
      ("cache/items/token", false), ("cache/index", false), ("cache/lock", false),
      ("cache/pending", false), ("cache/tmp", false), ("cache/items", true), ("cache", true),
      ("clock-mark", false), ("clock-mark.lock", false),
    ]
    for (position, lost) in positions {
      for kind in SpecialFile.allCases {
        // A corrupt item refuses every check; elsewhere the store may still answer correctly.
        let status: Set<Int32> =
          position == "cache/items/token" || position == "clock-mark" ? refused : [0, 1, 2, 74]
        cases.append(
          HostileCase(
            name: "\(kind) at \(position)", statusBefore: status,
            readBefore: position == "cache/items/token" ? refused : [0, 1, 2, 74],
            itemsLost: lost
          ) { scene in try scene.replace(position, with: kind) })
      }
    }
    for position in ["cache/items/token", "cache/index", "cache/pending", "clock-mark"] {
      cases.append(
        HostileCase(
          name: "1 TiB sparse \(position)",
          // `status` reads the index header only: an item's size is checked when it is read
          // (and by `status --verify`).
          statusBefore: [0, 1],
          readBefore: position == "cache/items/token" || position == "clock-mark" ? [1] : [0, 1]
        ) { scene in try scene.truncate(position, to: 1 << 40) })
    }
    cases += [
      HostileCase(name: "junk file under cache/items", statusBefore: [0], readBefore: [0]) {
        scene in try Data("junk".utf8).write(to: scene.url("cache/items/junk\u{7}"))
      },
      HostileCase(
        name: "directory named like a key under cache/items", statusBefore: refused,
        readBefore: [0, 1, 74]
      ) { scene in
        try FileManager.default.createDirectory(
          atPath: scene.path("cache/items/extra/deeper"), withIntermediateDirectories: true)
      },
      HostileCase(name: "garbage index", statusBefore: [0], readBefore: [0]) { scene in
        try Data(repeating: 0x41, count: 300).write(to: scene.url("cache/index"))
      },
      HostileCase(name: "index with a huge count", statusBefore: [0], readBefore: [0]) { scene in
        try scene.craftIndexHeader(count: .max, bodyLength: .max)
      },
      HostileCase(name: "garbage clock-mark", statusBefore: [1], readBefore: [1]) { scene in
        try Data(repeating: 0, count: 8192).write(to: scene.url("clock-mark"))
      },
      HostileCase(name: "generation at UInt64.max", statusBefore: [0], readBefore: [0]) {
        scene in try scene.craftGeneration(.max)
      },
      HostileCase(name: "leftover tmp files", statusBefore: [0], readBefore: [0]) { scene in
        try FileManager.default.createDirectory(
          atPath: scene.path("cache/tmp/w0"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: scene.url("cache/tmp/index"))
      },
    ]
    return cases + stagings + markTemporaries
  }()

  /// Every file type at `clock-mark.tmp` (the name the record is replaced through) while the
  /// record is missing or unreadable: a sign-in must replace both.
  static let markTemporaries: [HostileCase] = SpecialFile.allCases.flatMap { kind in
    ["missing", "garbage"].map { record in
      HostileCase(
        name: "\(kind) at clock-mark.tmp, clock-mark \(record)", statusBefore: [0, 1, 2, 74],
        readBefore: [0, 1, 2, 74]
      ) { scene in
        try scene.breakRecord(record)
        try scene.replace(FileClockMarkStore.temporaryFileName, with: kind)
      }
    }
  }

  /// The sealed store's matrix: every file type in every position of the store, those the
  /// sealed sign-in writes included (`cache/tmp/index`, the stagings beside `pending`), and at
  /// `clock-mark.tmp` with the record missing or unreadable.
  static let sealedCorruptions: [HostileCase] = {
    var cases: [HostileCase] = []
    let positions: [(String, Bool)] = [
      // Without the live index or clock mark that vouch for them, a sealed sign-in carries no
      // old item (an old copy put back would authenticate too): those positions lose them.
      ("cache/items/token", false), ("cache/index", true), ("cache/lock", false),
      ("cache/pending", false), ("cache/tmp", false), ("cache/tmp/index", false),
      ("cache/items", true), ("cache", true), ("clock-mark", true), ("clock-mark.lock", false),
    ]
    for (position, lost) in positions {
      for kind in SpecialFile.allCases {
        cases.append(
          HostileCase(
            name: "sealed: \(kind) at \(position)",
            // A sealed `status` reads the index header only (O(1)): an item is checked when it
            // is read.
            statusBefore: position == "clock-mark" ? refused : [0, 1, 2, 74],
            readBefore: position == "cache/items/token" ? refused : [0, 1, 2, 74], itemsLost: lost
          ) { scene in try scene.replace(position, with: kind) })
      }
    }
    for kind in SpecialFile.allCases {
      for (label, offset) in [("uncommitted", UInt64(1)), ("committed", 0)] {
        var hostile = HostileCase(
          name: "sealed: \(kind) at cache/next-<g> (\(label)) beside pending",
          statusBefore: [0, 1, 2, 74], readBefore: [0, 1, 2, 74]
        ) { scene in
          try Data().write(to: scene.url("cache/pending"))
          try scene.replace("cache/next-\(try scene.generation() + offset)", with: kind)
        }
        hostile.keepsStaging = true
        cases.append(hostile)
      }
      var pending = HostileCase(
        name: "sealed: \(kind) at cache/pending beside a committed staging",
        statusBefore: [0, 1, 2, 74], readBefore: [0, 1, 2, 74]
      ) { scene in
        try scene.makeStaging(try scene.generation())
        try scene.replace("cache/pending", with: kind)
      }
      pending.keepsStaging = true
      cases.append(pending)
    }
    return cases
      + markTemporaries.map { hostile in
        var hostile = hostile
        hostile.name = "sealed: " + hostile.name
        // No authentic clock mark vouches for the old index: a sealed sign-in carries nothing.
        hostile.itemsLost = true
        return hostile
      }
  }()

  /// A sealed store's owners and modes that let another user write (the sealed half of
  /// ``insecure``): refused with 74 by the offline reads; a sign-in replaces the index and drops
  /// an item it cannot trust, and refuses a directory another user could write.
  static let sealedInsecure: [HostileCase] = {
    var cases: [HostileCase] = []
    for mode in [0o777, 0o770, 0o707] {
      cases.append(
        HostileCase(
          name: "sealed: cache/items mode 0\(String(mode, radix: 8))", statusBefore: [74],
          readBefore: [74], signInAllowed: [74]
        ) { scene in try scene.chmod("cache/items", mode) })
    }
    cases += [
      HostileCase(
        name: "sealed: cache/items owned by uid 65534", statusBefore: [74], readBefore: [74],
        signInAllowed: [74]
      ) { scene in try scene.chown("cache/items", to: 65534) },
      HostileCase(
        name: "sealed: cache/index mode 0666", statusBefore: [74], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chmod("cache/index", 0o666) },
      HostileCase(
        name: "sealed: cache/index mode 0620 (g+w)", statusBefore: [74], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chmod("cache/index", 0o620) },
      HostileCase(
        name: "sealed: cache/index owned by uid 65534", statusBefore: [74], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chown("cache/index", to: 65534) },
      // `status` reads the index only (O(1)): an item is checked when it is read.
      HostileCase(
        name: "sealed: item owned by uid 65534", statusBefore: [0], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chown("cache/items/token", to: 65534) },
      HostileCase(
        name: "sealed: item mode 0666", statusBefore: [0], readBefore: [74], signInAllowed: [0]
      ) { scene in try scene.chmod("cache/items/token", 0o666) },
      HostileCase(
        name: "sealed: cache/next-<g> mode 0777 (committed)", statusBefore: [74],
        readBefore: [74], signInAllowed: [0]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try scene.chmod(staging, 0o777)
      },
      HostileCase(
        name: "sealed: cache/next-<g>/index mode 0666 (committed)", statusBefore: [74],
        readBefore: [74], signInAllowed: [0]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try scene.chmod(staging + "/index", 0o666)
      },
    ]
    return cases
  }()

  /// The positions the staged sign-in creates: `cache/next-<g>/` (uncommitted at `g + 1`,
  /// committed at the mark's `g`), the files inside a committed staging, and `cache/pending`
  /// beside one; every file type, sizes, crafted contents and modes.
  static let stagings: [HostileCase] = {
    var cases: [HostileCase] = []
    for kind in SpecialFile.allCases {
      for (label, offset) in [("uncommitted", UInt64(1)), ("committed", 0)] {
        cases.append(
          HostileCase(
            name: "\(kind) at cache/next-<g> (\(label)) beside pending", statusBefore: [0],
            readBefore: [0]
          ) { scene in
            try Data().write(to: scene.url("cache/pending"))
            try scene.replace("cache/next-\(try scene.generation() + offset)", with: kind)
          })
      }
      cases.append(
        HostileCase(
          name: "\(kind) at cache/pending beside a committed staging", statusBefore: [0],
          readBefore: [0]
        ) { scene in
          try scene.makeStaging(try scene.generation())
          try scene.replace("cache/pending", with: kind)
        })
      // Inside a committed staging: its index (then it is not a valid staging and the live set
      // is read), its items directory, a staged item, its list of deleted keys.
      for (inside, read) in [
        ("index", Set<Int32>([0])), ("items", [0, 1]), ("items/token", [1]), ("deleted", [0]),
      ] {
        cases.append(
          HostileCase(
            name: "\(kind) at cache/next-<g>/\(inside) (committed)", statusBefore: [0],
            readBefore: read
          ) { scene in
            let staging = try scene.makeStaging(try scene.generation())
            try scene.replace(staging + "/" + inside, with: kind)
          })
      }
    }
    for inside in ["index", "items/token", "deleted"] {
      cases.append(
        HostileCase(
          name: "1 TiB sparse cache/next-<g>/\(inside) (committed)", statusBefore: [0],
          readBefore: inside == "items/token" ? [1] : [0]
        ) { scene in
          let staging = try scene.makeStaging(try scene.generation())
          try scene.truncate(staging + "/" + inside, to: 1 << 40)
        })
    }
    cases += [
      HostileCase(
        name: "1 TiB sparse cache/pending beside a committed staging", statusBefore: [0],
        readBefore: [0]
      ) { scene in
        try scene.makeStaging(try scene.generation())
        try scene.truncate("cache/pending", to: 1 << 40)
      },
      HostileCase(name: "cache/pending with junk content", statusBefore: [0], readBefore: [0]) {
        scene in try Data(repeating: 0xFF, count: 4096).write(to: scene.url("cache/pending"))
      },
      HostileCase(
        name: "garbage cache/next-<g>/index (committed)", statusBefore: [0], readBefore: [0]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try Data(repeating: 0x41, count: 300).write(to: scene.url(staging + "/index"))
      },
      HostileCase(
        name: "cache/next-<g>/deleted naming paths outside items/", statusBefore: [0],
        readBefore: [0]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try Data("../../clock-mark\n../index\n/etc/hostname\nother".utf8)
          .write(to: scene.url(staging + "/deleted"))
      },
      HostileCase(
        name: "cache/next-<g> mode 0777 (committed)", statusBefore: [74], readBefore: [74]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try scene.chmod(staging, 0o777)
      },
      HostileCase(
        name: "cache/next-<g> owned by uid 65534 (committed)", statusBefore: [74],
        readBefore: [74]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try scene.chown(staging, to: 65534)
      },
      HostileCase(
        name: "cache/next-<g>/index mode 0666 (committed)", statusBefore: [74], readBefore: [74]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try scene.chmod(staging + "/index", 0o666)
      },
      HostileCase(
        name: "staged item mode 0666 (committed)", statusBefore: [0], readBefore: [74]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation())
        try FileManager.default.copyItem(
          atPath: scene.path("cache/items/token"), toPath: scene.path(staging + "/items/token"))
        try scene.chmod(staging + "/items/token", 0o666)
      },
      HostileCase(
        name: "cache/next-<g+1> mode 0777 (uncommitted)", statusBefore: [0], readBefore: [0]
      ) { scene in
        let staging = try scene.makeStaging(try scene.generation() + 1)
        try scene.chmod(staging, 0o777)
      },
    ]
    return cases.map { hostile in
      var hostile = hostile
      hostile.keepsStaging = hostile.name != "cache/pending with junk content"
      return hostile
    }
  }()

  /// Another user's files and directories, and modes that let others write.
  static let insecure: [HostileCase] = {
    var cases: [HostileCase] = []
    let whole: [String] = [".", "cache", "cache/items", "cache/index"]
    for position in whole {
      cases.append(
        HostileCase(
          name: "\(position) owned by uid 65534", statusBefore: [74], readBefore: [74],
          signInAllowed: position == "cache/index" ? [0] : [74]
        ) { scene in try scene.chown(position, to: 65534) })
      for mode in [0o777, 0o770, 0o707] where position != "cache/index" {
        cases.append(
          HostileCase(
            name: "\(position) mode 0\(String(mode, radix: 8))", statusBefore: [74],
            readBefore: [74], signInAllowed: [74]
          ) { scene in try scene.chmod(position, mode) })
      }
    }
    cases += [
      HostileCase(
        name: "cache/index mode 0666", statusBefore: [74], readBefore: [74], signInAllowed: [0]
      ) { scene in try scene.chmod("cache/index", 0o666) },
      HostileCase(
        name: "cache/index mode 0620 (g+w)", statusBefore: [74], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chmod("cache/index", 0o620) },
      HostileCase(
        name: "item owned by uid 65534", statusBefore: [0, 74], readBefore: [74],
        signInAllowed: [0]
      ) { scene in try scene.chown("cache/items/token", to: 65534) },
      HostileCase(
        name: "item mode 0666", statusBefore: [0, 74], readBefore: [74], signInAllowed: [0]
      ) { scene in try scene.chmod("cache/items/token", 0o666) },
      HostileCase(
        name: "cache/lock owned by uid 65534", statusBefore: [0, 74], readBefore: [0, 74],
        signInAllowed: [74]
      ) { scene in try scene.chown("cache/lock", to: 65534) },
      HostileCase(
        name: "clock-mark owned by uid 65534", statusBefore: [74], readBefore: [74],
        signInAllowed: [0, 74]
      ) { scene in try scene.chown("clock-mark", to: 65534) },
      HostileCase(
        name: "clock-mark mode 0666", statusBefore: [74], readBefore: [74], signInAllowed: [0, 74]
      ) { scene in try scene.chmod("clock-mark", 0o666) },
      HostileCase(
        name: "clock-mark.lock owned by uid 65534", statusBefore: [74], readBefore: [74],
        signInAllowed: [74]
      ) { scene in try scene.chown("clock-mark.lock", to: 65534) },
    ]
    return cases
  }()
}

/// A file of a type that is not a regular file at a sealed store's index or item.
struct SealedWrongType: CustomTestStringConvertible, Sendable {
  var kind: SpecialFile
  var position: String

  var testDescription: String { "\(kind) at \(position)" }

  static let cases: [SealedWrongType] = ["cache/index", "cache/items/token"].flatMap { position in
    [SpecialFile.fifo, .socket, .device, .directory, .symbolicLink].map {
      SealedWrongType(kind: $0, position: position)
    }
  }
}

/// A file that is not a regular file, put where a store's file or directory belongs.
enum SpecialFile: String, CaseIterable, Sendable, CustomStringConvertible {
  case fifo, socket, device, directory, symbolicLink, emptyFile

  var description: String { rawValue }
}

/// What stands where this machine's id belongs, for the matrix: nothing of it is an id.
enum MachineIDKind: String, CaseIterable, Sendable {
  case fifo, directory, sparseOneTebibyte, empty, garbage, characterDevice

  /// The bindings that put this kind over `/etc/machine-id` and, where it exists, over
  /// `/var/lib/dbus/machine-id` (so the fallback cannot supply the id either).
  ///
  /// - Parameter scratch: A directory of the test's own (created here).
  func bindings(scratch: String) throws -> [(source: String, target: String)] {
    let files = FileManager.default
    try files.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    let targets = SystemMachineIdentity.defaultPaths.filter { files.fileExists(atPath: $0) }
    let source = scratch + "/source"
    switch self {
    case .directory:
      return try targets.enumerated().flatMap { index, target in
        try MountNamespace.directory(inPlaceOf: target, scratch: scratch + "/dir-\(index)")
      }
    case .fifo:
      guard mkfifo(source, 0o600) == 0 else { throw POSIXError(.EIO) }
    case .sparseOneTebibyte:
      try Data("0123456789abcdef0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: source))
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
      try handle.truncate(atOffset: 1 << 40)
      try handle.close()
    case .empty:
      try Data().write(to: URL(fileURLWithPath: source))
    case .garbage:
      try Data([0xFF, 0x00, 0xFE] + Array("not-a-machine-id-\u{1}\n".utf8)).write(
        to: URL(fileURLWithPath: source))
    case .characterDevice:
      return targets.map { (source: "/dev/zero", target: $0) }
    }
    return targets.map { (source: source, target: $0) }
  }
}
