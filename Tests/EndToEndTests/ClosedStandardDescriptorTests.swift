import Foundation
import OfflineTTLTesting
import Testing

/// The built `offline-ttl` started with standard input, output or error closed (a shell's
/// `<&-`, `>&-`, `2>&-`): nothing it prints lands in a store file (an outside tester found `read`
/// with standard output closed writing the item into the clock-mark record, exit 0), the store
/// stays readable, and output that cannot be written is a failure (exit 74; a sign-in that
/// committed, 3), never success.
struct ClosedStandardDescriptorTests {
  /// What the shell closes, and whether standard output is among them.
  static let closings: [(redirection: String, closesOutput: Bool)] = [
    ("<&-", false), (">&-", true), ("2>&-", false), ("<&- >&- 2>&-", true),
  ]
  static let marker = String(repeating: "PAYLOAD-MARKER-", count: 300)

  @Test(arguments: closings.indices)
  func nothingPrintedLandsInTheStore(closing index: Int) throws {
    let (redirection, closesOutput) = Self.closings[index]
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-closed-fd")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let input = scratch.appending("token.txt")
    try Data(Self.marker.utf8).write(to: URL(fileURLWithPath: input))
    let runner = try BinaryRunner()
    let closed = ["sh", "-c", "exec \"$0\" \"$@\" \(redirection)"]
    let common = ["--store", store, "--max-age", "7d"]
    // The first sign-in with the descriptors closed makes the store.
    let commands: [[String]] = [
      ["sign-in", "--store", store, "--put", "token=\(input)"],
      ["read"] + common + ["token"],
      ["read", "--json"] + common + ["token"],
      ["status", "--verify"] + common,
      ["status", "--json"] + common,
      ["mark", "show", "--store", store],
      ["sign-in", "--store", store, "--put", "token=\(input)", "--json"],
    ]
    for command in commands {
      usleep(1_100_000 / 4)
      let result = try runner.run(command, launcher: closed)
      #expect(!result.timedOut, "\(command) \(redirection)")
      // A sign-in that committed but could not say so exits 3; anything else that cannot
      // write its output, 74.
      let unwritten: Int32 = command[0] == "sign-in" ? 3 : 74
      #expect(
        result.exitCode == (closesOutput ? unwritten : 0),
        "\(command) \(redirection): \(result.exitCode) \(result.standardError)")
      // Every store file but the item itself is free of what the command printed.
      let walker = try #require(FileManager.default.enumerator(atPath: store))
      for case let name as String in walker where !name.hasPrefix("cache/items/") {
        var isDirectory: ObjCBool = false
        let path = store + "/" + name
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
          !isDirectory.boolValue
        else { continue }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for printed in ["PAYLOAD-MARKER", "\"status\"", "status: ", "signed in"] {
          #expect(
            bytes.range(of: Data(printed.utf8)) == nil,
            "\(command) \(redirection): \(name) holds \(printed)")
        }
      }
      // And the store still reads fresh, its item intact.
      let check = try runner.run(["read"] + common + ["token"])
      #expect(check.exitCode == 0, "after \(command) \(redirection): \(check.standardError)")
      #expect(check.standardOutput == Self.marker, "after \(command) \(redirection)")
    }
  }
}
