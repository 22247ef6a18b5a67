import OfflineTTL
import Testing

@Suite struct CacheItemKeyLiteralTests {
  @Test func aLiteralIsTheSameKeyAsTheThrowingInitializer() throws {
    let literal: CacheItemKey = "profile.json"
    #expect(literal == (try CacheItemKey("profile.json")))
    #expect(literal.rawValue == "profile.json")
  }

  @Test func anInvalidLiteralTraps() async {
    await #expect(processExitsWith: .failure) {
      let _: CacheItemKey = "a/b"
    }
  }
}
