import Foundation
import OfflineTTLTesting
import Testing

/// `offline-ttl read` of an item that is changed in place after its first bytes were handed
/// out: the read ends with exit 1, and `--json` still prints one complete JSON object, which
/// says `expired` and `payload_complete: false`, never `fresh`.
///
/// The item (4 MiB, several read chunks) is read into a pipe that the test does not drain:
/// once the first bytes arrive, the checksum pass is over and the serving pass is blocked on
/// the full pipe, far from the item's end, so a change near the end is always met by it.
@Suite struct ReadStreamingEndToEndTests {
  static let itemSize = 4 << 20

  @Test(arguments: [true, false])
  func anItemChangedWhileItIsServedEndsAsARefusal(json: Bool) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-read-stream")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let payload = scratch.appending("big.bin")
    try Data(repeating: UInt8(ascii: "a"), count: Self.itemSize)
      .write(to: URL(fileURLWithPath: payload))
    let runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "big=\(payload)"])
    try #require(signIn.exitCode == 0, "\(signIn.standardError)")

    let read = try runner.start(
      ["read", "--store", store, "--max-age", "7d"] + (json ? ["--json"] : []) + ["big"],
      pipesStandardOutput: true)
    let output = try #require(read.standardOutput)
    var received = output.readData(ofLength: 1)
    try #require(received.count == 1, "the read wrote nothing")

    // Change bytes near the item's end in place (no rename): the serving pass meets them.
    let item = try FileHandle(forUpdating: URL(fileURLWithPath: store + "/cache/items/big"))
    let end = try item.seekToEnd()
    try item.seek(toOffset: end - 100)
    try item.write(contentsOf: Data("ZZZZ".utf8))
    try item.close()

    received.append(output.readDataToEndOfFile())
    let exit = read.waitForExit()
    #expect(exit.exitCode == 1, "exit \(String(describing: exit.exitCode))")
    if json {
      let object = try #require(
        try JSONSerialization.jsonObject(with: received) as? [String: Any],
        "one complete JSON object")
      #expect(object["status"] as? String == "expired")
      #expect(object["payload_complete"] as? Bool == false)
      #expect(object["read_error"] as? String == "item_unreadable")
      #expect((object["reasons"] as? [String])?.contains("item_unreadable") == true)
      #expect(object["key"] as? String == "big")
      let text = String(decoding: received, as: UTF8.self)
      #expect(!text.contains(#""status":"fresh""#))
      #expect(text.hasSuffix("}\n"))
    } else {
      // The raw bytes cannot be taken back: the exit status and stderr say they are incomplete.
      #expect(received.count <= Self.itemSize)
    }
  }
}
