/// Our side of the `peer` and `growth` comparisons: `OfflineAccessGate.checkEligibility()` over a
/// `DirectoryCacheStore` and a `FileClockMarkStore`. Not built until the gate is on main.
final class GateCheck {
  /// Write-type syscalls (`/proc/self/io` `syscw`) per writing check, in the last run.
  private(set) var writesPerWritingCheck = 0.0
  /// Write-type syscalls per repeated check, in the last run.
  private(set) var writesPerRepeatedCheck = 0.0

  init(directory: String, items: Int = 1) throws {
    throw BenchError.failed(
      "our checkEligibility() is not built yet (OfflineAccessGate is not on main)")
  }

  /// `count` checks with markResolution 0, each writing the mark; nanoseconds each.
  func writingChecks(_ count: Int) throws -> [UInt64] { [] }

  /// `count` checks with the default markResolution; nanoseconds each.
  func repeatedChecks(_ count: Int) throws -> [UInt64] { [] }
}
