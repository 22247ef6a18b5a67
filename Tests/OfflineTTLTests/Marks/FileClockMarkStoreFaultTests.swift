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
  /// Calls that can take effect and still report an error. Not `pwrite`: a `pwrite` that reports
  /// an error wrote nothing (the kernel's contract; a partial write returns a short count, which
  /// `FileClockMarkStoreNothingWrittenTests` injects with `SyscallFaultPlan.shorten`).
  static let effectfulKinds: Set<SyscallKind> = [.write, .fdatasync, .fsync, .renameat]

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

/// A failed write whose clean-up fails too: the previous slot's bytes cannot be put back, so the
/// file may offer the unacknowledged record now and lose the acknowledged one at a crash. The
/// store fails closed: `writeFailed` saying so, and `unreadable` for every later operation (this
/// store, a new one) until an online sign-in replaces the record, keeping the generation.
@Suite struct FileClockMarkStoreDoubleFaultTests {
  /// The call that fails first after the write took effect (`pwrite`: a short write of 100
  /// bytes, then an error for the rest; `fdatasync`: after the whole slot was written) and the
  /// call of the restore that fails next.
  struct DoubleFault: CustomTestStringConvertible, Sendable {
    let write: SyscallKind
    let restore: SyscallKind
    let keptOpen: Bool

    var testDescription: String {
      "\(write) then the restore's \(restore)\(keptOpen ? ", kept descriptors" : "")"
    }

    /// The restore's call: after a short pwrite and a failed one, the third pwrite or the
    /// first fdatasync; after a failed fdatasync, the second pwrite or the second fdatasync.
    var restoreOccurrence: Int {
      switch (write, restore) {
      case (.pwrite, .pwrite): 3
      case (.pwrite, _): 1
      default: 2
      }
    }

    static let all: [DoubleFault] = [SyscallKind.pwrite, .fdatasync].flatMap { write in
      [SyscallKind.pwrite, .fdatasync].flatMap { restore in
        [false, true].map { DoubleFault(write: write, restore: restore, keptOpen: $0) }
      }
    }
  }

  @Test(arguments: DoubleFault.all)
  func aWriteAndItsRestoreFailingLeaveTheRecordUnreadableUntilAnOnlineSignIn(
    _ fault: DoubleFault
  ) throws {
    let parent = try TemporaryStoreDirectory(prefix: "double-fault")
    defer { parent.remove() }
    let path = parent.appending("store")
    let previous = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(now: instant(1_000))
    let plan = SyscallFaultPlan()
    let store = FileClockMarkStore(atPath: path, faults: plan)
    if fault.keptOpen { _ = try store.read() }
    plan.resetCounts()
    if fault.write == .pwrite {
      plan.shorten(.pwrite, occurrence: 1, to: 100)
      plan.fail(.pwrite, occurrence: 2, with: .ioError)
    } else {
      plan.fail(fault.write, occurrence: 1, with: .ioError, timing: .afterCall)
    }
    plan.fail(fault.restore, occurrence: fault.restoreOccurrence, with: .noSpace)
    do {
      let transition = try store.observe(now: instant(2_000))
      Issue.record("the write was acknowledged: \(transition.current)")
    } catch {
      #expect(error.code == .writeFailed, "\(error)")
      #expect(error.errno == Errno.ioError.rawValue, "\(error)")
      #expect(error.description.contains("putting the previous record back failed"), "\(error)")
      #expect(error.description.contains("cut short"), "\(error)")
    }
    #expect(plan.injected.count == 2, "both faults fired: \(plan.injected)")

    // Neither record is offered: not the unacknowledged one, not the old one.
    for (label, reader) in [
      ("this store", store), ("a new store", FileClockMarkStore(atPath: path)),
    ] {
      #expect(throws: StoreError.self, "\(label)") { _ = try reader.read() }
      do {
        let transition = try reader.observe(now: instant(3_000))
        Issue.record("\(label) observed: \(transition.current)")
      } catch {
        #expect(error.code == .unreadable, "\(label): \(error)")
      }
    }
    // An online sign-in replaces the record, with the next generation.
    let reset = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(now: instant(4_000))
    #expect(reset.generation > previous.generation)
    #expect(try FileClockMarkStore(atPath: path).read() == reset)
  }

  /// The truncation failing as well: the error says the file is left as it is.
  @Test func theTruncationFailingTooIsSaid() throws {
    let parent = try TemporaryStoreDirectory(prefix: "double-fault")
    defer { parent.remove() }
    let path = parent.appending("store")
    _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(now: instant(1_000))
    let plan = SyscallFaultPlan()
    plan.fail(.fdatasync, occurrence: 1, with: .ioError, timing: .afterCall)
    plan.fail(.fdatasync, occurrence: 2, with: .ioError)
    plan.fail(.ftruncate, occurrence: 1, with: .readOnlyFileSystem)
    let store = FileClockMarkStore(atPath: path, faults: plan)
    do {
      _ = try store.observe(now: instant(2_000))
      Issue.record("the write was acknowledged")
    } catch {
      #expect(error.code == .writeFailed, "\(error)")
      #expect(error.description.contains("left as it is"), "\(error)")
    }
    #expect(plan.injected.count == 3, "\(plan.injected)")
  }
}

/// A write refused before it changed a byte (`EFBIG` under a file size limit, `ENOSPC`,
/// `EDQUOT`, `EIO`, `EROFS`): the old record is intact, so nothing is put back or cut short, and
/// the store keeps reading it (`writeFailed`, the gate's `mark_not_persisted`). A short write
/// followed by an error puts back exactly the bytes it changed, and the old record reads again.
@Suite struct FileClockMarkStoreNothingWrittenTests {
  static let errnos: [Errno] = [
    .fileTooLarge, .noSpace, Errno(rawValue: EDQUOT), .ioError, .readOnlyFileSystem,
  ]

  /// How the store is used: a plain observe, one through the kept descriptors, a reset (two
  /// slot writes: the first is the commit point).
  enum Operation: String, CaseIterable, Sendable { case observe, keptOpen, reset }

  static func run(_ operation: Operation, _ store: FileClockMarkStore) throws(ClockMarkStoreError) {
    switch operation {
    case .observe: _ = try store.observe(now: instant(2_000))
    case .keptOpen:
      _ = try store.observe(now: instant(2_000))
    case .reset: _ = try store.resetAfterOnlineSignIn(now: instant(500))
    }
  }

  /// A store with one record (mark 1,000) and the record file's bytes, and a store value over
  /// it whose system calls go through a fresh fault plan (counts reset; for `keptOpen` the
  /// record was read first, so the write goes to the descriptor kept open).
  struct FaultedRecord {
    let parent: TemporaryStoreDirectory
    let path: String
    let previous: ClockMarkRecord
    let file: URL
    let before: Data
    let plan = SyscallFaultPlan()
    let store: FileClockMarkStore

    init(_ operation: Operation, prefix: String) throws {
      parent = try TemporaryStoreDirectory(prefix: prefix)
      path = parent.appending("store")
      previous = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(now: instant(1_000))
      file = URL(fileURLWithPath: path + "/" + FileClockMarkStore.recordFileName)
      before = try Data(contentsOf: file)
      store = FileClockMarkStore(atPath: path, faults: plan)
      if operation == .keptOpen { _ = try store.read() }
      plan.resetCounts()
    }

    /// Runs `operation` under the faults planned, which must refuse it as `write_failed` with
    /// `errno`; returns the refusal's description.
    func refusal(of operation: Operation, errno: Errno) throws -> String {
      do {
        try FileClockMarkStoreNothingWrittenTests.run(operation, store)
      } catch {
        #expect(error.code == .writeFailed, "\(error)")
        #expect(error.errno == errno.rawValue, "\(error)")
        return error.description
      }
      Issue.record("the write was acknowledged")
      return ""
    }

    /// The record file is byte for byte as it was, and reads as the record before.
    func expectRecordAsItWas() throws {
      #expect(try Data(contentsOf: file) == before, "the record file is byte for byte as it was")
      #expect(try FileClockMarkStore(atPath: path).read() == previous)
    }
  }

  @Test(arguments: Operation.allCases, errnos)
  func aWriteRefusedBeforeAnyByteLeavesTheRecordAsItWas(_ operation: Operation, _ errno: Errno)
    throws
  {
    let f = try FaultedRecord(operation, prefix: "nothing-written")
    defer { f.parent.remove() }
    f.plan.fail(.pwrite, occurrence: 1, with: errno)
    let message = try f.refusal(of: operation, errno: errno)
    #expect(message.contains("nothing was written"), "\(message)")
    #expect(!message.contains("cut short"), "\(message)")
    #expect(f.plan.injected.count == 1)
    #expect(f.plan.count(of: .pwrite) == 1, "nothing was put back")
    #expect(f.plan.count(of: .ftruncate) == 0, "nothing was cut short")
    try f.expectRecordAsItWas()
    #expect(try f.store.read() == f.previous)
    // The next write, without the fault, succeeds in the same store.
    #expect(try f.store.observe(now: instant(3_000)).current.mark == instant(3_000))
  }

  @Test(arguments: Operation.allCases, errnos)
  func aShortWriteThenAnErrorPutsBackTheChangedBytes(_ operation: Operation, _ errno: Errno)
    throws
  {
    let f = try FaultedRecord(operation, prefix: "short-write")
    defer { f.parent.remove() }
    f.plan.shorten(.pwrite, occurrence: 1, to: 100)
    f.plan.fail(.pwrite, occurrence: 2, with: errno)
    let message = try f.refusal(of: operation, errno: errno)
    #expect(message.contains("the previous record is kept"), "\(message)")
    #expect(f.plan.count(of: .pwrite) == 3, "the 100 changed bytes were written back")
    #expect(f.plan.count(of: .ftruncate) == 0)
    try f.expectRecordAsItWas()
  }

  /// The seam's shortened write: at most the given bytes, then the loop writes the rest.
  @Test func aShortenedWriteIsCompletedByTheLoop() throws {
    let parent = try TemporaryStoreDirectory(prefix: "shorten")
    defer { parent.remove() }
    let path = parent.appending("file")
    try Data(count: 16).write(to: URL(fileURLWithPath: path))
    let plan = SyscallFaultPlan()
    let system = Syscalls(faults: plan)
    let fd = try system.open(path, .readWrite)
    defer { system.closeIgnoringErrors(fd) }
    plan.shorten(.pwrite, occurrence: 1, to: 3)
    var written = 0
    try system.pwriteAll(fd, bytes: [1, 2, 3, 4, 5, 6, 7, 8][...], at: 0, written: &written)
    #expect(written == 8)
    #expect(plan.count(of: .pwrite) == 2)
    plan.resetCounts()
    plan.shorten(.pwrite, occurrence: 1, to: 5)
    plan.fail(.pwrite, occurrence: 2, with: .noSpace)
    #expect(throws: Errno.noSpace) {
      try system.pwriteAll(fd, bytes: [9, 9, 9, 9, 9, 9, 9, 9][...], at: 8, written: &written)
    }
    #expect(written == 5)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: path))
        == Data([1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 0, 0, 0]))
  }
}
