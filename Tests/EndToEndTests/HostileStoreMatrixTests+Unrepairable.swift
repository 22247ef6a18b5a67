import Foundation
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A directory or lock file that an online sign-in does not repair (the store directory,
/// `cache/`, `cache/items/`, `cache/tmp/`, `cache/lock`, `clock-mark.lock`), made another user's
/// or writable by group or others.
struct UnrepairableCase: CustomTestStringConvertible, Sendable {
  /// The position, relative to the store.
  let position: String
  /// `0777`-style mode, or `nil` for the owner change (uid 65534).
  let mode: Int?
  let sealed: Bool

  var isDirectory: Bool { !position.hasSuffix("lock") }
  /// Whether the offline commands open this position (they never look at `tmp/`; they take
  /// `cache/lock` only to rebuild an index).
  var readersCheck: Set<Int32> {
    switch position {
    case "cache/tmp": [0]
    case "cache/lock": [0, 74]
    default: [74]
    }
  }

  var change: String { mode.map { "mode 0" + String($0, radix: 8) } ?? "owned by uid 65534" }
  var testDescription: String { (sealed ? "sealed: " : "") + "\(position) \(change)" }

  func make(_ scene: Scene) throws {
    if let mode { try scene.chmod(position, mode) } else { try scene.chown(position, to: 65534) }
  }

  /// What the user does on reading the message: `chmod go-w`, or `chown` back.
  func undo(_ scene: Scene) throws {
    if mode != nil {
      try scene.chmod(position, isDirectory ? 0o700 : 0o600)
    } else {
      try scene.chown(position, to: geteuid())
    }
  }

  static let all: [UnrepairableCase] = [false, true].flatMap { sealed in
    [".", "cache", "cache/items", "cache/tmp", "cache/lock", "clock-mark.lock"].flatMap {
      position in
      let modes = position.hasSuffix("lock") ? [0o666, 0o620] : [0o777, 0o707]
      return (modes.map(Optional.some) + [nil]).map {
        UnrepairableCase(position: position, mode: $0, sealed: sealed)
      }
    }
  }
}

extension HostileStoreMatrixTests {
  /// Outside test 2, F3 and F4, and their kind: a sign-in (plain or with `--put`, sealed or
  /// not) over a directory or lock file of the store that another user owns or that group or
  /// others may write refuses up front with `insecure_store` (exit 74) naming it, having written
  /// nothing: no staging, no `pending`, no new generation, every file of the store as it was.
  /// `cache/tmp` at 0777 used to give exit 0 with `next-2/` and `pending` left behind and every
  /// later sign-in stuck at 74; a plain sign-in over an `items/` at 0777 used to report "signed
  /// in" over a store that every reader refuses. Once the user fixes the mode or owner, as the
  /// message says, a sign-in succeeds and the store reads fresh.
  @Test(arguments: UnrepairableCase.all)
  func aSignInRefusesWhatItCannotRepairBeforeWritingAnything(_ hostile: UnrepairableCase)
    throws
  {
    let scene = try Scene(binary: binary, sealed: hostile.sealed)
    defer { scene.remove() }
    let label = hostile.testDescription
    let generation = try scene.generation()
    try hostile.make(scene)
    let outside = scene.outsideSnapshot()
    let status = try run(scene.status, allowed: hostile.readersCheck, label)
    if status.exitCode == 74 {
      let text = status.standardOutput + status.standardError
      #expect(text.contains("insecure_store"), "\(label): \(text)")
    }
    let before = Scene.snapshot(scene.store)
    let path = scene.path(hostile.position)
    for keys in [[], ["token"]] {
      let signIn = try run(scene.signIn(keys), allowed: [74], "\(label), --put \(keys)")
      #expect(
        signIn.standardError.contains("insecure_store") && signIn.standardError.contains(path),
        "\(label): \(signIn.standardError)")
      #expect(
        signIn.standardError.contains(hostile.mode == nil ? "chown" : "chmod go-w"),
        "\(label): the message says what to do: \(signIn.standardError)")
      #expect(scene.stagings() == [], "\(label): a staging was left")
      #expect(!scene.exists("cache/pending"), "\(label): pending was left")
      #expect(Scene.snapshot(scene.store) == before, "\(label): the store changed")
    }
    // Fixed as the message says: a plain sign-in, then one with --put, recover; the refused
    // ones committed nothing (the generation is the next one).
    try hostile.undo(scene)
    let fixed = try run(scene.signIn([]), allowed: [0], label + " after the fix")
    if fixed.exitCode == 0 {
      #expect(try fixed.jsonInt64("generation") == Int64(generation) + 1, "\(label)")
    }
    #expect(scene.stagings() == [] && !scene.exists("cache/pending"), "\(label)")
    try run(scene.status, allowed: [0], label + " after the fix")
    try run(scene.signIn(["token"]), allowed: [0], label + " after the fix")
    let read = try run(scene.read("token"), allowed: [0], label + " after the fix")
    #expect(read.standardOutput == Scene.newPayload, "\(label)")
    #expect(scene.outsideSnapshot() == outside, "\(label): something outside the store changed")
  }

  /// Outside test 2, F9 (the exit-code split) and its kind: a clock-mark record that group or
  /// others may read (0640, 0644, 0604) is refused exactly as one they may write (0660, 0606) or
  /// one of another user: `insecure_store` naming the record and what to do, exit 74 from
  /// `status`, `read` and `mark show`, the record left alone. (A readable record used to be
  /// `mark_unreadable (insecure_mode)` with exit 1.) A plain sign-in replaces the record with a
  /// new file of its own (0600, this user's) and the store reads fresh.
  @Test(arguments: [false, true])
  func aRecordOthersMayReadOrWriteIsInsecureAndASignInReplacesIt(_ sealed: Bool) throws {
    let changes: [Int?] = [0o640, 0o644, 0o604, 0o660, 0o606, nil]
    for mode in changes {
      let scene = try Scene(binary: binary, sealed: sealed)
      defer { scene.remove() }
      let label =
        (sealed ? "sealed: " : "")
        + "clock-mark " + (mode.map { "mode 0" + String($0, radix: 8) } ?? "owned by uid 65534")
      let generation = try scene.generation()
      if let mode {
        try scene.chmod("clock-mark", mode)
      } else {
        try scene.chown("clock-mark", to: 65534)
      }
      let record = Scene.snapshot(scene.store)["clock-mark"]
      let status = try run(scene.status, allowed: [74], label)
      #expect(
        status.standardOutput.contains("insecure_store: \(scene.path("clock-mark"))"),
        "\(label): \(status.standardOutput)")
      #expect(status.standardOutput.contains("sign in online"), "\(label)")
      let read = try run(scene.read("token"), allowed: [74], label)
      #expect(read.standardOutput.isEmpty, "\(label): bytes served")
      #expect(read.standardError.contains("insecure_store"), "\(label): \(read.standardError)")
      try run(["mark", "show", "--dir", scene.store] + scene.seal, allowed: [74], label)
      #expect(Scene.snapshot(scene.store)["clock-mark"] == record, "\(label): record changed")
      let signIn = try run(scene.signIn([]), allowed: [0], label)
      #expect(try signIn.jsonInt64("generation") == Int64(generation) + 1, "\(label)")
      var info = stat()
      #expect(lstat(scene.path("clock-mark"), &info) == 0)
      #expect(info.st_mode & 0o7777 == 0o600 && info.st_uid == geteuid(), "\(label)")
      // A sealed store's items are carried only from the index an authentic clock mark
      // vouches for; a record others could write vouches for none (it is replaced, not read).
      try run(scene.status, allowed: sealed ? [0, 2] : [0], label + " after sign-in")
      let after = try run(
        scene.read("token"), allowed: sealed ? [0, 2] : [0], label + " after sign-in")
      if after.exitCode == 0 { #expect(after.standardOutput == Scene.tokenPayload, "\(label)") }
    }
  }
}
