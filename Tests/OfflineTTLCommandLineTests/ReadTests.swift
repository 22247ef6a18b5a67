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
    #expect(
      run.standardOutput.hasSuffix(
        #""key":"token","written_at":"2023-11-14T22:13:20.000000000Z","#
          + #""written_at_ns":1700000000000000000,"size":3,"payload_base64":"YWJj"}"# + "\n"))
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
    #expect(json.standardOutput.hasSuffix("\"}\n"))
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
