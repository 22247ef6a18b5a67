import Testing

@testable import OfflineTTLCommandLine

@Suite struct HelpFormatterTests {
  let configuration = CommandConfiguration(
    name: "thing", abstract: "Does a thing.", usage: ["thing --now <t> <key>", "thing --all"],
    options: [
      .option("now", value: "t", help: "Now."),
      .option("tag", value: "tag", repeatable: true, help: "A tag."),
    ],
    positionals: [PositionalSpec(name: "key", help: "The key.")],
    discussion: "More words.")

  @Test func helpListsUsageArgumentsOptionsAndDiscussion() {
    #expect(
      HelpFormatter.help(for: configuration) == """
        OVERVIEW: Does a thing.

        USAGE: offline-ttl thing --now <t> <key>
               offline-ttl thing --all

        ARGUMENTS:
          <key>     The key.

        OPTIONS:
          --now <t>    Now.
          --tag <tag>  A tag. Repeatable.
          -h, --help   Shows this help.

        More words.

        """)
  }

  @Test func usageHintPointsAtHelp() {
    #expect(
      HelpFormatter.usageHint(for: configuration) == """
        usage: offline-ttl thing --now <t> <key>
               offline-ttl thing --all
        See 'offline-ttl thing --help'.

        """)
  }

  @Test func wrapsAtSpacesWithinTheWidth() {
    #expect(HelpFormatter.wrap("aa bb cc dd", width: 5) == ["aa bb", "cc dd"])
    #expect(HelpFormatter.wrap("toolongword x", width: 4) == ["toolongword", "x"])
    #expect(HelpFormatter.wrap("", width: 4) == [""])
  }
}
