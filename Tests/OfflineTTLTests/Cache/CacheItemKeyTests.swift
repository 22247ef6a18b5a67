import OfflineTTL
import Testing

@Suite struct CacheItemKeyTests {
  @Test(arguments: [
    "a", "token", ".hidden", "..x", "x..", "with space", "ключ", "🔑", "index", "clock-mark",
    String(repeating: "a", count: 255), String(repeating: "é", count: 127),
  ])
  func acceptsValidKeys(_ text: String) throws {
    #expect(try CacheItemKey(text).rawValue == text)
  }

  @Test(arguments: [
    ("", "got 0 bytes"),
    (String(repeating: "a", count: 256), "got 256 bytes"),
    (String(repeating: "é", count: 128), "got 256 bytes"),
    (".", "`.` and `..`"),
    ("..", "`.` and `..`"),
    ("a/b", "`/`"),
    ("/", "`/`"),
    ("a\u{0}b", "NUL"),
    ("tab\there", "control"),
    ("line\n", "control"),
    ("del\u{7F}", "control"),
    ("c1\u{85}", "control"),
  ])
  func rejectsInvalidKeysWithInvalidKeyCode(_ text: String, _ why: String) {
    #expect {
      try CacheItemKey(text)
    } throws: { error in
      guard let error = error as? InvalidValueError else { return false }
      return error.code == .invalidKey && error.reason.contains(why)
    }
  }

  @Test func quotesControlCharactersInTheMessage() {
    do {
      _ = try CacheItemKey("bad\nkey")
      Issue.record("accepted a newline")
    } catch {
      #expect(
        error.description
          == #"invalid_key: invalid key "bad\u{a}key": control characters are not allowed"#)
    }
  }

  @Test func ordersByUTF8Bytes() throws {
    let keys = try ["b", "a", "Z", "é", "e"].map { try CacheItemKey($0) }
    #expect(keys.sorted().map(\.rawValue) == ["Z", "a", "b", "e", "é"])
  }
}
