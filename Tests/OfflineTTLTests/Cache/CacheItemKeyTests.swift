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
    ("e\u{301}", "NFC"),
    ("Cafe\u{301} menu", "NFC"),
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
      _ = try CacheItemKey(String("bad\nkey"))  // a String, not a literal (a literal traps)
      Issue.record("accepted a newline")
    } catch {
      #expect(
        error.description
          == #"invalid_key: invalid key "bad\u{a}key": control characters are not allowed"#)
    }
  }

  @Test func theNFCSpellingIsAcceptedAndIsTheOnlyOne() throws {
    // The decomposed spelling equals the precomposed one as a Swift String, but not byte for
    // byte: only one of them may name a file.
    #expect("e\u{301}" == "\u{E9}")
    #expect(try CacheItemKey("\u{E9}").rawValue.utf8.elementsEqual([0xC3, 0xA9]))
    #expect(try CacheItemKey("\u{1E9B}\u{323}").rawValue == "\u{1E9B}\u{323}")
    #expect(throws: InvalidValueError.self) { try CacheItemKey(String("\u{17F}\u{323}\u{307}")) }
  }

  @Test func ordersByUTF8Bytes() throws {
    let keys = try ["b", "a", "Z", "é", "e"].map { try CacheItemKey($0) }
    #expect(keys.sorted().map(\.rawValue) == ["Z", "a", "b", "e", "é"])
  }
}
