import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// A crafted generation at `UInt64.max` never wraps to 0 (the trust-on-first-use generation) on
/// the next online sign-in, in every backend.
@Suite struct GenerationLimitTests {
  static let observation = ClockObservation(
    wall: WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000), boot: nil)

  @Test(arguments: [(UInt64(0), UInt64(1)), (1, 2), (.max - 1, .max), (.max, 1)])
  func theNextGenerationNeverWrapsToZero(_ stored: UInt64, _ next: UInt64) {
    #expect(ClockMarkRecord.generation(after: stored) == next)
  }

  @Test func aFileRecordAtTheMaximumResetsToOne() throws {
    let directory = try TemporaryStoreDirectory(prefix: "generation")
    defer { directory.remove() }
    let store = FileClockMarkStore(atPath: directory.path)
    let first = try store.resetAfterOnlineSignIn(Self.observation)
    let crafted = ClockMarkRecord(generation: .max, mark: first.mark, floor: first.floor)
    try Data(MarkRecordCodec.encodeFile(crafted, sequence: 1)).write(
      to: URL(fileURLWithPath: directory.appending(FileClockMarkStore.recordFileName)))
    #expect(try store.read().generation == .max)
    let reset = try store.resetAfterOnlineSignIn(Self.observation)
    #expect(reset.generation == 1)
    #expect(try store.read().generation == 1)
  }
}
