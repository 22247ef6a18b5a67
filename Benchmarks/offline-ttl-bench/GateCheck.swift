/// Our side of the `peer` comparison: `OfflineAccessGate.checkEligibility()` over a
/// `DirectoryCacheStore` and a `FileClockMarkStore`. Not built until the gate is on main.
final class GateCheck {
  /// How many of the repeated checks wrote the mark.
  private(set) var repeatedWrites = 0

  init(directory: String) throws {
    throw BenchError.failed(
      "our checkEligibility() is not built yet (OfflineAccessGate is not on main)")
  }

  /// `count` checks with markResolution 0, each writing the mark; nanoseconds each.
  func writingChecks(_ count: Int) throws -> [UInt64] { [] }

  /// `count` checks with the default markResolution; nanoseconds each.
  func repeatedChecks(_ count: Int) throws -> [UInt64] { [] }
}
