import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// One store operation from a known starting state, for fault injection at each of its steps.
struct FaultScenario: CustomTestStringConvertible, Sendable {
  let name: String
  /// Whether the record exists before (with mark 1000, generation 1).
  let startsWithRecord: Bool
  /// Whether the store directory exists before.
  let directoryExists: Bool
  /// Whether the operation writes in place (a failure must then read back the old record).
  let inPlace: Bool
  let run: @Sendable (FileClockMarkStore) throws(ClockMarkStoreError) -> ClockMarkRecord?

  var testDescription: String { name }

  static let all: [FaultScenario] = [
    FaultScenario(name: "observe", startsWithRecord: true, directoryExists: true, inPlace: true) {
      store throws(ClockMarkStoreError) in try store.observe(now: instant(2_000)).current
    },
    FaultScenario(
      name: "observe through the kept descriptors", startsWithRecord: true,
      directoryExists: true, inPlace: true
    ) { store throws(ClockMarkStoreError) in
      _ = try store.read()
      return try store.observe(now: instant(2_000)).current
    },
    FaultScenario(
      name: "reset over a record", startsWithRecord: true, directoryExists: true, inPlace: true
    ) { store throws(ClockMarkStoreError) in try store.resetAfterOnlineSignIn(now: instant(500)) },
    FaultScenario(
      name: "reset over absent", startsWithRecord: false, directoryExists: true, inPlace: false
    ) { store throws(ClockMarkStoreError) in try store.resetAfterOnlineSignIn(now: instant(500)) },
    FaultScenario(
      name: "reset creating the directory", startsWithRecord: false, directoryExists: false,
      inPlace: false
    ) { store throws(ClockMarkStoreError) in try store.resetAfterOnlineSignIn(now: instant(500)) },
    FaultScenario(
      name: "createFirstMark", startsWithRecord: false, directoryExists: true, inPlace: false
    ) { store throws(ClockMarkStoreError) in try store.createFirstMark(now: instant(700)) },
    FaultScenario(name: "read", startsWithRecord: true, directoryExists: true, inPlace: true) {
      store throws(ClockMarkStoreError) in try store.read()
    },
  ]

  /// A fresh directory in the starting state; returns the store path.
  func prepare(in parent: TemporaryStoreDirectory) throws -> String {
    let path = parent.appending("store-\(UUID().uuidString)")
    if startsWithRecord {
      _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(now: instant(1_000))
    } else if directoryExists {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }
    return path
  }
}

@Suite struct FileClockMarkStoreFaultTests {
  static let errnos: [Errno] = [.ioError, .noSpace, .readOnlyFileSystem, .interrupted]
  static let effectfulKinds: Set<SyscallKind> = [.pwrite, .write, .fdatasync, .fsync, .renameat]

  /// What a clean store reads back: the record, or `nil` for absent.
  func readBack(_ path: String) throws -> ClockMarkRecord? {
    do {
      return try FileClockMarkStore(atPath: path).read()
    } catch  where error.code == .absent {
      return nil
    }
  }

  @Test(arguments: FaultScenario.all)
  func everyStepFailingLeavesTheOldOrTheNewRecord(scenario: FaultScenario) throws {
    let parent = try TemporaryStoreDirectory(prefix: "faults")
    defer { parent.remove() }
    // A clean run: the steps, the previous state and the new record.
    let cleanPath = try scenario.prepare(in: parent)
    let previous = try readBack(cleanPath)
    let tracer = SyscallFaultPlan()
    let cleanStore = FileClockMarkStore(atPath: cleanPath, faults: tracer)
    let expected = try scenario.run(cleanStore)
    // The steps of the operations, not the closing of a store's kept descriptors when it goes.
    let steps = withExtendedLifetime(cleanStore) { tracer.trace }
    #expect(steps.count >= 5)
    var injections = 0
    for index in steps.indices {
      let (kind, occurrence) = tracer.occurrence(at: index)
      var timings: [SyscallFaultPlan.Timing] = [.beforeCall]
      if Self.effectfulKinds.contains(kind) { timings.append(.afterCall) }
      for errno in Self.errnos {
        // A call that reports EINTR had no effect (the kernel's contract; close aside), so an
        // injected EINTR is only ever "before the call".
        for timing in timings where !(errno == .interrupted && timing == .afterCall) {
          let label = "\(scenario.name): \(kind) #\(occurrence) \(errno.name) \(timing)"
          let path = try scenario.prepare(in: parent)
          let plan = SyscallFaultPlan()
          plan.fail(kind, occurrence: occurrence, with: errno, timing: timing)
          let store = FileClockMarkStore(atPath: path, faults: plan)
          var failure: ClockMarkStoreError? = nil
          var result: ClockMarkRecord? = nil
          do {
            result = try scenario.run(store)
          } catch {
            failure = error
          }
          #expect(plan.injected.count == 1, "\(label): the fault fired")
          injections += plan.injected.count
          let after: ClockMarkRecord?
          do {
            after = try readBack(path)
          } catch {
            Issue.record("\(label): the record is unreadable afterwards: \(error)")
            continue
          }
          if errno == .interrupted {
            #expect(failure == nil, "\(label): EINTR is retried and the operation succeeds")
            #expect(result == expected, "\(label)")
          }
          if let failure {
            #expect(failure.errno == errno.rawValue, "\(label): \(failure)")
            if scenario.inPlace {
              #expect(after == previous, "\(label): a failed in-place write keeps the old record")
            } else {
              #expect(
                after == previous || after == expected,
                "\(label): old or new, got \(String(describing: after))")
            }
          } else {
            #expect(result == expected, "\(label)")
            #expect(after == (expected ?? previous), "\(label): success is durable")
          }
          if let after, let previous, !(scenario.name.hasPrefix("reset")) {
            #expect(after.mark >= previous.mark, "\(label): never a lower mark")
          }
          let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
          #expect(
            !names.contains(FileClockMarkStore.temporaryFileName), "\(label): no temp file left")
        }
      }
    }
    #expect(injections >= steps.count * Self.errnos.count)
  }
}
