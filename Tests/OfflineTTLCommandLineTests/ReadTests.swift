import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

@testable import OfflineTTLCommandLine

@Suite struct ReadTests {
  @Test func freshCacheWritesTheItemsBytesExactly() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "secret\nbytes"], clock: clock)
    defer { directory.remove() }
    let run = runCommand(
      ["read", "--store", directory.appending("store"), "--max-age", "7d", "token"],
      clock: clock)
    #expect(run.exitCode == .success)
    #expect(run.standardOutput == "secret\nbytes")
  }

  @Test func jsonCarriesWrittenAtAndBase64Payload() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let run = runCommand(
      ["read", "--store", directory.appending("store"), "--max-age", "7d", "--json", "token"],
      clock: clock)
    #expect(run.exitCode == .success)
    // The item's members and the payload first; the decision after it, so that a read that
    // fails mid-stream can still end the object as a refusal.
    #expect(
      run.standardOutput.hasPrefix(
        #"{"key":"token","written_at":"2023-11-14T22:13:20.000000000Z","#
          + #""written_at_ns":1700000000000000000,"size":3,"payload_base64":"YWJj","status":"fresh","#
      ))
    #expect(run.standardOutput.hasSuffix(#","payload_complete":true}"# + "\n"))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
    #expect(object["reasons"] as? [String] == [])
    #expect(object["generation"] != nil)
  }

  @Test func expiredIsRefusedOnStandardErrorAndTouchesNoItem() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let itemPath = store + "/cache/items/token"
    let before = try Data(contentsOf: URL(fileURLWithPath: itemPath))
    clock.advance(by: .seconds(86_400 + 1))
    let run = runCommand(["read", "--store", store, "--max-age", "1d", "token"], clock: clock)
    #expect(run.exitCode == .expired)
    #expect(run.standardOutput == "")
    #expect(run.standardError == "error: refused: expired: too_old\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: itemPath)) == before)
  }

  @Test func missingKeyOrEmptyCacheExits2() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let missing = runCommand(
      ["read", "--store", directory.appending("store"), "--max-age", "7d", "other"], clock: clock)
    #expect(missing.exitCode == .unavailable)
    #expect(missing.standardError == "error: no item with key \"other\"\n")
    let empty = runCommand(
      ["read", "--store", directory.path, "--max-age", "7d", "token"], clock: clock)
    #expect(empty.exitCode == .unavailable)
    #expect(empty.standardError == "error: refused: unavailable: nothing is cached\n")
  }

  @Test(arguments: ["a/b", ".", "..", "", "tab\tkey", String(repeating: "k", count: 256)])
  func invalidKeyExits64(_ key: String) {
    let run = runCommand(
      ["read", "--store", "/tmp", "--max-age", "7d", key], clock: UnimplementedWallClock())
    #expect(run.exitCode == .usage)
    #expect(run.standardError.hasPrefix("error: invalid key "))
  }

  @Test func missingStoreExits74() {
    let run = runCommand(
      ["read", "--store", "/nonexistent/x", "--max-age", "7d", "k"],
      clock: UnimplementedWallClock())
    #expect(run.exitCode == .ioError)
  }

  /// A wall clock that reads `first` for its first `switchAfter` readings and `later` after.
  final class SwitchingClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var readings = 0
    let first: WallClockInstant
    let later: WallClockInstant
    let switchAfter: Int

    init(first: WallClockInstant, later: WallClockInstant, switchAfter: Int) {
      self.first = first
      self.later = later
      self.switchAfter = switchAfter
    }

    func now() -> WallClockInstant {
      lock.withLock {
        readings += 1
        return readings <= switchAfter ? first : later
      }
    }

    var count: Int { lock.withLock { readings } }
  }

  /// Every kind of refusal after the open: `--json` gives the refusal's own reasons (every one),
  /// its code, its sentence, and the store's error only when a store failed; never a blanket
  /// `item_unreadable`.
  @Test func eachRefusalAfterTheOpenCarriesItsOwnReasonsInJSON() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: directory.appending("store")),
      marks: FileClockMarkStore(atPath: directory.appending("store")),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400)), clock: clock,
      bootClock: stillBootClock())
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("the store was not fresh")
      return
    }
    let key: CacheItemKey = "token"
    let markError = StoreError(code: .unreadable, message: "bad checksum")
    let itemError = StoreError(code: .itemUnreadable, message: "truncated")
    let kinds: [(EligibilityReasons, StoreError?, String)] = [
      (.tooOld, nil, "deadline_passed"),
      (.clockBehindMark, nil, "clock_behind_mark"),
      ([.clockBehindMark, .tooOld], nil, "clock_behind_mark"),
      (.markUnreadable, markError, "mark_unreadable"),
      (.itemUnreadable, itemError, "item_unreadable"),
      (.tpmUnavailable, nil, "tpm_unavailable"),
      (.tpmChanged, nil, "tpm_changed"),
      (.bootClockUnavailable, nil, "refused"),
      ([.clockBehindElapsedTime], nil, "refused"),
    ]
    for (reasons, storeError, code) in kinds {
      let error = OfflineReadError(reasons: reasons, storeError: storeError, reason: "why \(code)")
      let object = Read.refusalObject(
        error, decision: reader.decision, key: key, maxAge: .seconds(86_400))
      #expect(object["status"] == .string("expired"))
      #expect(object["reasons"] == .array(reasons.codes.map { .string($0) }), "\(reasons)")
      #expect(object["read_error"] == .string(code))
      #expect(object["read_error_reason"] == .string("why \(code)"))
      if reasons.contains(.itemUnreadable) {
        #expect(object["item_error_code"] == .string("item_unreadable"))
      } else {
        #expect(object["item_error_code"] == nil)
        #expect(object["item_error"] == .null)
      }
      if reasons.contains(.markUnreadable) {
        #expect(object["mark_error"] == .string(markError.description))
      } else {
        #expect(object["mark_error"] == .null)
      }
    }
  }

  /// The same on the command, in process: the clock passes the deadline (or goes behind the
  /// mark) between the open and the read, and `--json` says so.
  @Test(arguments: ["deadline_passed", "clock_behind_mark"])
  func aRefusalAfterTheOpenPrintsItsOwnReasons(_ kind: String) throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let arguments = ["read", "--store", store, "--max-age", "1d", "--json", "token"]
    // How many times the open reads the clock: a status run reads it the same way.
    let counting = SwitchingClock(
      first: storeCommandStart, later: storeCommandStart, switchAfter: .max)
    #expect(
      runCommand(["status", "--store", store, "--max-age", "1d"], clock: counting).exitCode
        == .success)
    let later =
      kind == "deadline_passed"
      ? storeCommandStart.saturatingAdvanced(by: .seconds(86_400 + 1))
      : storeCommandStart.saturatingAdvanced(by: .seconds(-3_600))
    let switching = SwitchingClock(
      first: storeCommandStart, later: later, switchAfter: counting.count)
    let run = runCommand(arguments, clock: switching)
    #expect(run.exitCode == .expired, "\(run.standardOutput) \(run.standardError)")
    let reason = kind == "deadline_passed" ? "too_old" : "clock_behind_mark"
    #expect(run.standardOutput.contains(#""status":"expired","reasons":["\#(reason)"]"#))
    #expect(run.standardOutput.contains(#""read_error":"\#(kind)""#), "\(run.standardOutput)")
    #expect(!run.standardOutput.contains("item_unreadable"), "\(run.standardOutput)")
    #expect(run.standardError.hasPrefix("error: refused: expired: \(kind)"), "\(run.standardError)")
  }

  /// A newer sign-in's set refused by the reader: the JSON is that decision's, as for a refusal
  /// at open (its own reasons and generation).
  @Test func aNewerSignInsRefusedSetPrintsItsDecision() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "abc"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let gate = OfflineAccessGate(
      cache: DirectoryCacheStore(atPath: store), marks: FileClockMarkStore(atPath: store),
      policy: try EligibilityPolicy(maxAge: .seconds(86_400)), clock: clock,
      bootClock: stillBootClock())
    guard case .opened(let reader) = gate.openOffline() else {
      Issue.record("the store was not fresh")
      return
    }
    clock.advance(by: .seconds(3_600))
    _ = try gate.beginOnlineSession()
    clock.moveBack(by: .seconds(1_800))
    do {
      _ = try reader.item(forKey: "token")
      Issue.record("a refused set was served")
    } catch {
      let decision = try #require(error.decision)
      let context = CommandContext(
        standardOutput: OutputSink(), standardError: OutputSink(),
        standardInput: InputSource(text: ""), clock: clock, environment: [:],
        bootClock: stillBootClock())
      let failure = Read.refusal(
        decision, key: "token", json: true, maxAge: .seconds(86_400),
        store: store, context: context)
      #expect(failure.exitCode == .expired)
      let text = context.standardOutput.capturedText
      let reasons = decision.reasons.codes.map { "\"\($0)\"" }.joined(separator: ",")
      #expect(decision.reasons.contains(.clockBehindMark))
      #expect(text.hasPrefix(#"{"status":"expired","reasons":[\#(reasons)]"#), "\(text)")
      #expect(text.contains(#""generation":2,"#), "\(text)")
    }
  }
}

@Suite struct ReadStreamingTests {
  /// Larger than several chunks and not a multiple of 3: raw and base64 both equal the item.
  @Test func aMultiChunkItemIsWrittenExactlyRawAndAsBase64() throws {
    let clock = ManualWallClock(storeCommandStart)
    let count = 2 * Read.chunkSize + 5
    let text = String((0..<count).map { Character(Unicode.Scalar(UInt8(32 + ($0 * 7) % 95))) })
    let directory = try signedInStore(["big": text], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let raw = runCommand(["read", "--store", store, "--max-age", "7d", "big"], clock: clock)
    #expect(raw.exitCode == .success)
    #expect(raw.standardOutput == text)
    let json = runCommand(
      ["read", "--store", store, "--max-age", "7d", "--json", "big"], clock: clock)
    #expect(json.exitCode == .success)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    #expect(object["payload_base64"] as? String == Data(text.utf8).base64EncodedString())
    #expect(object["size"] as? Int == count)
    #expect(object["status"] as? String == "fresh")
    #expect(object["payload_complete"] as? Bool == true)
  }

  /// A payload byte flipped in place: refused with nothing on standard output (raw), or only
  /// the refusal's object (--json); the item is left alone.
  @Test func aCorruptedPayloadIsRefusedWithNothingWritten() throws {
    let clock = ManualWallClock(storeCommandStart)
    let directory = try signedInStore(["token": "secret bytes"], clock: clock)
    defer { directory.remove() }
    let store = directory.appending("store")
    let path = store + "/cache/items/token"
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[bytes.count - 1] ^= 0x20
    try bytes.write(to: URL(fileURLWithPath: path))
    let raw = runCommand(["read", "--store", store, "--max-age", "7d", "token"], clock: clock)
    #expect(raw.exitCode == .expired)
    #expect(raw.standardOutput == "")
    #expect(raw.standardError.contains("item_unreadable"))
    let json = runCommand(
      ["read", "--store", store, "--max-age", "7d", "--json", "token"], clock: clock)
    #expect(json.exitCode == .expired)
    #expect(!json.standardOutput.contains("payload_base64"))
    #expect(json.standardOutput.contains(#""item_error_code":"item_unreadable""#))
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "left alone")
  }
}
