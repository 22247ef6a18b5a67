import Foundation
import Testing

/// libfaketime environments for a child run by ``BinaryRunner``.
///
/// Only the child is faked, never the test runner (timers hang under libfaketime). Under
/// libfaketime Swift's `CommandLine.arguments` is empty in the child; `offline-ttl` reads its
/// arguments through `ProcessArguments`, so it is unaffected.
enum FakeTime {
  /// Where libfaketime is installed by the Debian package `faketime`, or `nil`.
  static let library: String? = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
  ].first { FileManager.default.fileExists(atPath: $0) }

  /// Why a test that needs libfaketime is skipped, for `.enabled(if: FakeTime.library != nil,
  /// FakeTime.missing)`: the test runner reports it as skipped with this reason.
  static let missing: Comment =
    "faketime (libfaketime.so.1, Debian package faketime) is not installed"

  /// The environment that freezes the child's wall clock at `instant` (whole seconds, UTC) and
  /// keeps its boot clock real (`FAKETIME_DONT_FAKE_MONOTONIC=1`).
  ///
  /// - Parameters:
  ///   - seconds: The frozen wall-clock time, in whole seconds since the Unix epoch.
  ///   - library: The path of `libfaketime.so.1` (``library``).
  /// - Returns: Variables to add to the child's environment.
  static func frozenWallClock(atSecondsSinceEpoch seconds: Int64, library: String) -> [String:
    String]
  {
    let date = Date(timeIntervalSince1970: TimeInterval(seconds))
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return [
      "LD_PRELOAD": library,
      "FAKETIME": formatter.string(from: date),
      "FAKETIME_DONT_FAKE_MONOTONIC": "1",
      "FAKETIME_NO_CACHE": "1",
      "TZ": "UTC",
    ]
  }
}
