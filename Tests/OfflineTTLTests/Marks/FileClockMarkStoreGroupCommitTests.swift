import Foundation
import OfflineTTLTesting
import Synchronization
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Group commit in `FileClockMarkStore.observe`: an observation that read the record and its
/// clocks while another writer held the lock writes nothing when the record it then finds under
/// the lock covers its own, and only then; it is never acknowledged above the durable mark.
@Suite struct FileClockMarkStoreGroupCommitTests {
  static let base = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let bootID = BootID(uuidString: "00000000-0000-4000-8000-00000000000b")!

  /// The clocks `milliseconds` after `base`, the boot clock moving with the wall clock.
  static func at(_ milliseconds: Int64) -> ClockObservation {
    ClockObservation(
      wall: base.saturatingAdvanced(by: .milliseconds(milliseconds)),
      boot: BootClockReading(
        bootID: bootID, sinceBoot: .seconds(100) + .milliseconds(milliseconds)))
  }

  /// A store directory with a record at `base`, and its path.
  static func makeStore() throws -> (TemporaryStoreDirectory, String) {
    let parent = try TemporaryStoreDirectory(prefix: "group-commit")
    let path = parent.appending("store")
    _ = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: { at(0) })
    return (parent, path)
  }

  /// A store whose first operation already ran, so that its next observation may read the
  /// record before taking the lock.
  static func warmed(_ path: String, plan: SyscallFaultPlan) throws -> FileClockMarkStore {
    let store = FileClockMarkStore(atPath: path, faults: plan)
    _ = try store.read()
    plan.resetCounts()
    return store
  }

  /// Holds the store's lock from another open file description (a writer in another process,
  /// as the observing store sees it) until released, or for at most `bound`.
  static func holdLock(_ path: String, releasingAfter bound: Duration = .seconds(60)) throws
    -> HeldFileLock
  {
    try HeldFileLock(path + "/" + FileClockMarkStore.lockFileName, releasingAfter: bound)
  }

  /// Observes with `store` while another writer holds the lock; `meanwhile` runs inside the
  /// first clock reading, after the lock was released (what the other writer did). Returns the
  /// transition and how many times the clocks were read.
  static func observeWhileLocked(
    _ store: FileClockMarkStore, path: String, value: Int64, later: Int64? = nil,
    meanwhile: () throws -> Void
  ) throws -> (ClockMarkTransition, Int) {
    let held = try holdLock(path)
    var readings = 0
    var failure: (any Error)? = nil
    let transition = try store.observe(readingClocks: {
      readings += 1
      if readings == 1 {
        held.release()
        do { try meanwhile() } catch { failure = error }
        return at(value)
      }
      return at(later ?? value)
    })
    if let failure { throw failure }
    return (transition, readings)
  }

  @Test func aWriteThatCoversTheObservationSparesItsWriteAndItsSync() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    var leader: ClockMarkTransition? = nil
    let (transition, readings) = try Self.observeWhileLocked(store, path: path, value: 400) {
      leader = try FileClockMarkStore(atPath: path).observe(readingClocks: { Self.at(500) })
    }
    let written = try #require(leader)
    #expect(written.wrote)
    #expect(!transition.wrote)
    #expect(transition.coveringRecord == written.current, "covered by the leader's record")
    #expect(transition.previous.mark == Self.at(0).wall, "judged on the record read before")
    #expect(transition.current.mark == Self.at(400).wall)
    #expect(transition.storedMark == Self.at(500).wall)
    #expect(readings == 1)
    #expect(plan.count(of: .fdatasync) == 0, "no sync: the leader's is durable")
    #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .fsync) == 0)
    #expect(try FileClockMarkStore(atPath: path).read() == written.current)
  }

  /// The record file's newest slot: its index, sequence and record.
  static func newestSlot(_ path: String) throws -> (
    slot: Int, sequence: UInt64, record: ClockMarkRecord
  ) {
    let bytes = try [UInt8](
      Data(contentsOf: URL(fileURLWithPath: path + "/" + FileClockMarkStore.recordFileName)))
    let loaded = try FileClockMarkStore.newest(in: bytes, fd: FileDescriptor(rawValue: -1))
    return (loaded.newestSlot, loaded.sequence, loaded.record)
  }

  /// Writes `bytes` at slot `slot` of the record, without syncing (what a writer that holds the
  /// lock has done before its `fdatasync`).
  static func writeSlot(_ path: String, _ slot: Int, _ bytes: [UInt8]) throws {
    let fd = open(path + "/" + FileClockMarkStore.recordFileName, O_WRONLY | O_CLOEXEC)
    try #require(fd >= 0)
    defer { close(fd) }
    let written = bytes.withUnsafeBytes {
      pwrite(fd, $0.baseAddress, $0.count, off_t(MarkRecordCodec.slotOffsets[slot]))
    }
    try #require(written == bytes.count)
  }

  /// While another writer still holds the lock and has a second write in flight, a waiter is
  /// covered by the write before it: the older of two valid slots is durable (its writer held
  /// the lock until its `fdatasync` returned, before the next writer could start).
  @Test func theOlderOfTwoValidSlotsCoversAWaiterWhileTheLockIsStillHeld() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    // A safety net: if the waiter waited for the lock instead, it gets it after 60 s and then
    // reads the newest slot (`sixHundred`), which the expectations below tell apart. Long
    // enough that a loaded machine never reaches it before the waiter returns.
    let held = try Self.holdLock(path)
    let before = try Self.newestSlot(path)
    let fiveHundred = before.record.observing(Self.at(500))
    let sixHundred = fiveHundred.observing(Self.at(600))
    var readings = 0
    var failure: (any Error)? = nil
    let transition = try store.observe(readingClocks: {
      readings += 1
      do {
        try Self.writeSlot(
          path, 1 - before.slot,
          MarkRecordCodec.encode(fiveHundred, sequence: before.sequence + 1))
        try Self.writeSlot(
          path, before.slot, MarkRecordCodec.encode(sixHundred, sequence: before.sequence + 2))
      } catch { failure = error }
      return Self.at(400)
    })
    if let failure { throw failure }
    #expect(!held.isReleased, "acknowledged while the other writer held the lock")
    held.release()
    #expect(transition.coveringRecord == fiveHundred, "the older slot, not the write in flight")
    #expect(!transition.wrote)
    #expect(transition.current.mark == Self.at(400).wall)
    #expect(readings == 1)
    #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .fdatasync) == 0)
  }

  /// What a writer holding the lock may leave in the page cache that must not cover a waiter:
  /// a covering newest slot beside an older one that does not cover, and a covering slot beside
  /// a torn one (the covering slot may be a later writer's write in flight).
  enum InFlight: CaseIterable, Sendable { case newestAboveOlder, besideATornSlot }

  @Test(arguments: InFlight.allCases)
  func aWriteThatMayBeInFlightNeverCoversBeforeTheLockIsReleased(_ inFlight: InFlight) throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    // The other writer finishes 0.3 s later.
    let held = try Self.holdLock(path, releasingAfter: .milliseconds(300))
    let before = try Self.newestSlot(path)
    let threeHundred = before.record.observing(Self.at(300))
    let sixHundred = threeHundred.observing(Self.at(600))
    var failure: (any Error)? = nil
    let transition = try store.observe(readingClocks: {
      do {
        switch inFlight {
        case .newestAboveOlder:
          try Self.writeSlot(
            path, 1 - before.slot,
            MarkRecordCodec.encode(threeHundred, sequence: before.sequence + 1))
          try Self.writeSlot(
            path, before.slot, MarkRecordCodec.encode(sixHundred, sequence: before.sequence + 2))
        case .besideATornSlot:
          try Self.writeSlot(
            path, 1 - before.slot,
            MarkRecordCodec.encode(sixHundred, sequence: before.sequence + 1))
          try Self.writeSlot(path, before.slot, [UInt8](repeating: 0x5A, count: 64))
        }
      } catch { failure = error }
      return Self.at(400)
    })
    if let failure { throw failure }
    #expect(held.isReleased, "acknowledged only after the writer released the lock")
    #expect(transition.coveringRecord == sixHundred)
    #expect(!transition.wrote)
    #expect(plan.count(of: .pwrite) == 0 && plan.count(of: .fdatasync) == 0)
  }

  @Test func theDurableSlotIsTheOlderOfTwoValidOnes() throws {
    let record = ClockMarkRecord.afterOnlineSignIn(generation: 3, at: Self.at(0))
    let later = record.observing(Self.at(100))
    var bytes = [UInt8](repeating: 0, count: MarkRecordCodec.fileSize)
    func put(_ slot: Int, _ encoded: [UInt8]) {
      let offset = MarkRecordCodec.slotOffsets[slot]
      bytes.replaceSubrange(offset..<(offset + encoded.count), with: encoded)
    }
    put(0, MarkRecordCodec.encode(later, sequence: 8))
    put(1, MarkRecordCodec.encode(record, sequence: 7))
    let durable = try #require(FileClockMarkStore.durableSlot(in: bytes))
    #expect(durable.sequence == 7 && durable.record == record)
    put(1, [UInt8](repeating: 0x5A, count: 64))
    #expect(FileClockMarkStore.durableSlot(in: bytes) == nil, "one slot torn: none")
    put(1, MarkRecordCodec.encode(record, sequence: 8))
    #expect(FileClockMarkStore.durableSlot(in: bytes) == nil, "the same sequence twice: none")
  }

  @Test func aLowerConcurrentWriteDoesNotCoverAndTheClocksAreReadAgain() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    let (transition, readings) = try Self.observeWhileLocked(
      store, path: path, value: 400, later: 450
    ) {
      _ = try FileClockMarkStore(atPath: path).observe(readingClocks: { Self.at(200) })
    }
    #expect(transition.wrote)
    #expect(transition.coveringRecord == nil)
    #expect(readings == 2, "the record changed: the clocks are read again under the lock")
    #expect(transition.previous.mark == Self.at(200).wall)
    #expect(transition.current.mark == Self.at(450).wall)
    #expect(plan.count(of: .fdatasync) == 1)
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(450).wall)
  }

  @Test func aSignInBetweenTheReadAndTheLockIsNeverCovered() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    var reset: ClockMarkRecord? = nil
    // The sign-in lowers the mark below the value read before it (a clock that ran fast).
    let (transition, readings) = try Self.observeWhileLocked(
      store, path: path, value: 900, later: 300
    ) {
      reset = try FileClockMarkStore(atPath: path).resetAfterOnlineSignIn(readingClocks: {
        Self.at(250)
      })
    }
    let signedIn = try #require(reset)
    #expect(readings == 2)
    #expect(transition.coveringRecord == nil)
    #expect(transition.previous == signedIn, "judged on the reset, never on the record before")
    #expect(transition.current.generation == signedIn.generation)
    #expect(transition.current.mark == Self.at(300).wall, "the reset is not undone")
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(300).wall)
  }

  /// A waiter that is not covered writes with clocks read under the lock, even when nothing was
  /// written since its read: the later reading covers every observation that waited meanwhile.
  @Test func anUncoveredWaiterReadsItsClocksAgainUnderTheLock() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    let (transition, readings) = try Self.observeWhileLocked(
      store, path: path, value: 400, later: 999
    ) {}
    #expect(readings == 2, "once before the lock, once under it")
    #expect(transition.wrote)
    #expect(transition.coveringRecord == nil)
    #expect(transition.observation == Self.at(999))
    #expect(transition.current.mark == Self.at(999).wall)
    #expect(plan.count(of: .fdatasync) == 1)
    #expect(try FileClockMarkStore(atPath: path).read().mark == Self.at(999).wall)
  }

  @Test func withNoWriterHoldingTheLockTheClocksAreReadUnderIt() throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let plan = SyscallFaultPlan()
    let store = try Self.warmed(path, plan: plan)
    let lockPath = path + "/" + FileClockMarkStore.lockFileName
    var lockedAtReading: Bool? = nil
    _ = try store.observe(readingClocks: {
      let fd = open(lockPath, O_RDONLY | O_CLOEXEC)
      defer { close(fd) }
      lockedAtReading = flock(fd, LOCK_EX | LOCK_NB) != 0
      return Self.at(100)
    })
    #expect(lockedAtReading == true)
    #expect(plan.count(of: .pread) == 1, "no read before the lock, one under it")
  }

  @Test func coveringNeedsTheSameGenerationMachineAndAFloorAtLeastAsFar() {
    let record = ClockMarkRecord.afterOnlineSignIn(generation: 3, at: Self.at(0))
    let next = record.observing(Self.at(400))
    let higher = record.observing(Self.at(500))
    #expect(higher.covers(next))
    #expect(higher.covers(higher))
    #expect(!next.covers(higher), "a lower mark covers nothing higher")
    var otherGeneration = higher
    otherGeneration.generation = 4
    #expect(!otherGeneration.covers(next))
    var otherMachine = higher
    otherMachine.machine = MachineID(high: 1, low: 2)
    #expect(!otherMachine.covers(next) || higher.machine == otherMachine.machine)
    // A mark as high, but a floor anchored earlier on the boot clock: not covered.
    var earlierFloor = higher
    earlierFloor.floor = record.floor
    #expect(!earlierFloor.covers(next))
    var untrusted = higher
    untrusted.floor.isUntrusted = true
    #expect(!untrusted.covers(next))
    var trusted = higher
    trusted.trustedTime = TrustedTime(
      anchor: nil, lowerBound: higher.mark, elapsedSinceAnchor: .zero, lastBoot: nil,
      lastTPM: nil)
    #expect(!trusted.covers(next), "a record with trusted time is always written")
  }

  /// Eight writers, each with its own store instance or all sharing one (each operation then
  /// locks through a lock descriptor of its own), observing a rising honest clock: every
  /// acknowledged observation finds the durable record (read afterwards under the lock) at least
  /// as high as what it reported, and the final record is the highest one written.
  @Test(arguments: [false, true])
  func eightConcurrentWritersNeverAcknowledgeAboveTheDurableMark(sharingOneInstance: Bool) throws {
    let (parent, path) = try Self.makeStore()
    defer { parent.remove() }
    let clock = Mutex<Int64>(0)
    let problems = Mutex<[String]>([])
    let written = Mutex<Int64>(0)
    let acknowledged = Mutex<Int64>(0)
    let rounds = 40
    let shared = FileClockMarkStore(atPath: path)
    runConcurrently(8) { writer in
      let store = sharingOneInstance ? shared : FileClockMarkStore(atPath: path)
      let check = FileClockMarkStore(atPath: path)
      for round in 0..<rounds {
        do {
          let transition = try store.observe(readingClocks: {
            Self.at(
              clock.withLock {
                $0 += 1; return $0
              })
          })
          let durable = try check.read()
          let mark = transition.current.mark
          if durable.mark < mark || durable.generation != transition.current.generation {
            problems.withLock {
              $0.append(
                "writer \(writer) round \(round): acknowledged \(mark), durable \(durable.mark)")
            }
          }
          if transition.wrote, transition.coveringRecord != nil {
            problems.withLock { $0.append("a covered observation also wrote") }
          }
          acknowledged.withLock { $0 = max($0, mark.nanosecondsSinceEpoch) }
          if transition.wrote { written.withLock { $0 = max($0, mark.nanosecondsSinceEpoch) } }
        } catch {
          problems.withLock { $0.append("writer \(writer) round \(round): \(error)") }
        }
      }
    }
    #expect(problems.withLock { $0 } == [])
    let final = try FileClockMarkStore(atPath: path).read()
    let finalNanoseconds = final.mark.nanosecondsSinceEpoch
    #expect(finalNanoseconds == written.withLock { $0 }, "the final record is the highest written")
    #expect(finalNanoseconds >= acknowledged.withLock { $0 })
    #expect(
      finalNanoseconds == Self.at(clock.withLock { $0 }).wall.nanosecondsSinceEpoch,
      "the highest reading was written")
  }
}
