import OfflineTTL
import Testing

struct StoreErrorTests {
  @Test func equalityIgnoresTheMessage() {
    let one = StoreError(code: .writeFailed, errno: 5, message: "cannot write: EIO")
    let other = StoreError(code: .writeFailed, errno: 5, message: "a different sentence")
    #expect(one == other)
    #expect(one.hashValue == other.hashValue)
    #expect(Set([one, other]).count == 1)
  }

  @Test(arguments: [
    StoreError(code: .lockFailed, errno: 5, message: "m"),
    StoreError(code: .writeFailed, errno: 28, message: "m"),
    StoreError(code: .writeFailed, message: "m"),
    StoreError(code: .writeFailed, errno: 5, unusableReason: .timedOut, message: "m"),
    StoreError(code: .unreadable, unreadableReason: .badChecksum, message: "m"),
  ])
  func structuredDetailTakesPartInEquality(_ different: StoreError) {
    let base = StoreError(code: .writeFailed, errno: 5, message: "m")
    #expect(base != different)
  }

  @Test func theUnreadableReasonAndTheKeyTakePartInEquality() throws {
    let checksum = StoreError(code: .unreadable, unreadableReason: .badChecksum, message: "m")
    let link = StoreError(code: .unreadable, unreadableReason: .symbolicLink, message: "m")
    #expect(checksum != link)
    let a = StoreError(code: .itemUnreadable, key: CacheItemKey("a"), message: "m")
    let b = StoreError(code: .itemUnreadable, key: CacheItemKey("b"), message: "m")
    #expect(a != b)
  }

  @Test func descriptionNamesTheCodeTheReasonAndTheMessage() {
    let error = StoreError(
      code: .unreadable, unreadableReason: .badChecksum, message: "no slot passes its checksum")
    #expect(error.description == "unreadable (bad_checksum): no slot passes its checksum")
    let unusable = StoreError(
      code: .storeUnusable, unusableReason: .collectionLocked, message: "locked")
    #expect(unusable.description == "store_unusable (collection_locked): locked")
  }

  @Test func codesHaveStableNames() {
    let codes: [(StoreError.Code, String)] = [
      (.absent, "absent"), (.unreadable, "unreadable"), (.itemUnreadable, "item_unreadable"),
      (.indexUnreadable, "index_unreadable"), (.writeFailed, "write_failed"),
      (.lockFailed, "lock_failed"), (.storeUnusable, "store_unusable"),
      (.storeFromAnotherMachine, "store_from_another_machine"),
      (.machineIDUnreadable, "machine_id_unreadable"),
    ]
    for (code, name) in codes { #expect(code.description == name) }
  }

  @Test func theMarkAndCacheStoresThrowTheSameType() {
    // The earlier names are the same type, so a caller catches one type from both stores.
    #expect(ClockMarkStoreError.self == StoreError.self)
    #expect(CacheStoreError.self == StoreError.self)
    let earlier = StoreError(code: .absent, reason: "none")
    #expect(earlier.message == "none")
    #expect(earlier.reason == "none")
  }
}
