import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Evidence belongs to one device: the mark record is bound to the machine id at sign-in, a
/// record of another machine is refused (`store_from_another_machine`) and never advanced, and
/// only an online sign-in rebinds it.
@Suite struct MachineBindingTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let day = Duration.seconds(86_400)
  static let machineA = MachineID(high: 0xA, low: 0xA)
  static let machineB = MachineID(high: 0xB, low: 0xB)

  /// One machine using a shared store: its own boot clock and machine id, the one honest wall
  /// clock that every machine shares.
  struct Machine {
    let boot: ManualBootClock
    let gate: OfflineAccessGate

    init(
      _ id: MachineID?, bootID: BootID, uptime: Duration, wall: ManualWallClock,
      marks: any ClockMarkStore, cache: any CacheItemStore,
      maxAge: Duration = MachineBindingTests.day * 30
    ) throws {
      boot = ManualBootClock(bootID: bootID, sinceBoot: uptime)
      let policy = try EligibilityPolicy(maxAge: maxAge, usesBootClockFloor: true)
      gate = OfflineAccessGate(
        cache: cache, marks: marks, policy: policy,
        clocks: Clocks(wall: wall, boot: boot, machine: ManualMachineIdentity(id)))
    }

    func signIn() throws {
      let session = try gate.beginOnlineSession()
      try session.write(CacheItemKey("token"), Data("secret".utf8))
    }
  }

  // Parsing the machine-id file.

  @Test(arguments: [
    (
      "0123456789abcdef0123456789abcdef\n",
      MachineID(high: 0x0123_4567_89ab_cdef, low: 0x0123_4567_89ab_cdef)
    ),
    (
      "0123456789ABCDEF0123456789ABCDEF",
      MachineID(high: 0x0123_4567_89ab_cdef, low: 0x0123_4567_89ab_cdef)
    ),
  ])
  func aMachineIDFileIsThirtyTwoHexDigits(_ text: String, _ id: MachineID) {
    #expect(MachineID(machineIDText: text) == id)
    #expect(MachineID(machineIDText: text)?.description == id.description)
  }

  @Test(arguments: [
    "", "\n", "uninitialized\n", "00000000000000000000000000000000\n",
    "0123456789abcdef0123456789abcde\n", "0123456789abcdef0123456789abcdef0\n",
    "01234567-89ab-cdef-0123-456789abcdef\n", "+123456789abcdef0123456789abcdef",
    "0123456789abcdef+123456789abcdef", "0123456789abcdef0123456789abcdeg",
    "0123456789abcdef0123456789abcdef\n\n", " 0123456789abcdef0123456789abcdef",
  ])
  func anythingElseIsNoMachineID(_ text: String) {
    #expect(MachineID(machineIDText: text) == nil)
  }

  @Test func theSecondFileIsTheFallbackAndNeitherIsNone() throws {
    let directory = try TemporaryStoreDirectory(prefix: "machine-id")
    defer { directory.remove() }
    let first = directory.appending("etc-machine-id")
    let second = directory.appending("dbus-machine-id")
    let source = SystemMachineIdentity(paths: [first, second])
    #expect(source.current() == nil)
    try Data("0000000000000000000000000000000b\n".utf8).write(to: URL(fileURLWithPath: second))
    #expect(source.current() == MachineID(high: 0, low: 0xB))
    // A FIFO in the first place is never waited on.
    try #require(mkfifo(first, 0o600) == 0)
    neverWaitingOn([first], "the machine id's FIFO was waited on") {
      #expect(source.current() == MachineID(high: 0, low: 0xB))
    }
    try FileManager.default.removeItem(atPath: first)
    try Data("0000000000000000000000000000000a\n".utf8).write(to: URL(fileURLWithPath: first))
    #expect(source.current() == MachineID(high: 0, low: 0xA))
    // A link (as some systems make one of the two) is resolved to its target.
    try FileManager.default.removeItem(atPath: first)
    try FileManager.default.createSymbolicLink(atPath: first, withDestinationPath: second)
    #expect(source.current() == MachineID(high: 0, low: 0xB))
  }

  @Test func theSystemsMachineIDIsReadWhereThereIsOne() {
    let present = SystemMachineIdentity.defaultPaths.contains {
      FileManager.default.fileExists(atPath: $0)
    }
    if present { #expect(SystemMachineIdentity().current() != nil) }
  }

  // The record format.

  @Test(arguments: [false, true])
  func aBoundRecordIsVersionThreeAndReadsBack(_ trusted: Bool) throws {
    let observation = ClockObservation(
      wall: Self.start,
      boot: BootClockReading(bootID: BootID(high: 1, low: 2), sinceBoot: .seconds(9)),
      machine: Self.machineA)
    var record = ClockMarkRecord.afterOnlineSignIn(generation: 7, at: observation)
    if trusted {
      record.trustedTime = TrustedTime(
        anchor: nil, lowerBound: Self.start, elapsedSinceAnchor: .zero, lastBoot: observation.boot,
        lastTPM: nil)
    }
    #expect(record.machine == Self.machineA)
    let bytes = MarkRecordCodec.encode(record, sequence: 3)
    #expect(bytes.count == 256)
    #expect(bytes[4] == 3 && bytes[5] == 0)
    #expect(MarkRecordCodec.decode(bytes[...]) == .valid(sequence: 3, record: record))
    // Unbound, the same record is written as before binding existed (version 1 or 2).
    record.machine = nil
    let earlier = MarkRecordCodec.encode(record, sequence: 3)
    #expect(earlier.count == (trusted ? 256 : 128))
    #expect(earlier[4] == (trusted ? 2 : 1))
    #expect(MarkRecordCodec.decode(earlier[...]) == .valid(sequence: 3, record: record))
  }

  @Test(arguments: [UInt32(1) << 11, 1 << 31, 1 << 1])
  func aVersionThreeSlotWithAFlagItDoesNotKnowIsAnUnknownVersion(_ flag: UInt32) {
    let record = ClockMarkRecord(
      generation: 1, mark: Self.start, floor: .signIn(at: Self.start, boot: nil),
      machine: Self.machineA)
    var bytes = MarkRecordCodec.encode(record, sequence: 1)
    let flags =
      UInt32(bytes[72]) | UInt32(bytes[73]) << 8 | UInt32(bytes[74]) << 16
      | UInt32(bytes[75]) << 24 | flag
    for index in 0..<4 { bytes[72 + index] = UInt8(truncatingIfNeeded: flags >> (8 * index)) }
    let sum = MarkRecordCodec.checksum(bytes[0..<252])
    for index in 0..<4 { bytes[252 + index] = UInt8(truncatingIfNeeded: sum >> (8 * index)) }
    #expect(MarkRecordCodec.decode(bytes[...]) == .unknownVersion(3))
  }

  // The gate.

  @Test func aRecordOfAnotherMachineIsRefusedUntilASignInThereRebindsIt() throws {
    let directory = try TemporaryStoreDirectory(prefix: "machine")
    defer { directory.remove() }
    let marks = FileClockMarkStore(atPath: directory.path)
    let cache = DirectoryCacheStore(atPath: directory.path)
    let wall = ManualWallClock(Self.start)
    let a = try Machine(
      Self.machineA, bootID: BootID(high: 1, low: 1), uptime: Self.day, wall: wall, marks: marks,
      cache: cache)
    let b = try Machine(
      Self.machineB, bootID: BootID(high: 2, low: 2), uptime: Self.day, wall: wall, marks: marks,
      cache: cache)
    let unknown = try Machine(
      nil, bootID: BootID(high: 1, low: 1), uptime: Self.day, wall: wall, marks: marks,
      cache: cache)
    try a.signIn()
    #expect(try marks.read().machine == Self.machineA)
    wall.advance(by: .seconds(60))
    #expect(a.gate.checkEligibility().status == .fresh)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.appending("clock-mark")))
    for other in [b, unknown] {
      wall.advance(by: .seconds(60))
      let decision = other.gate.checkEligibility()
      #expect(decision.status == .expired)
      #expect(decision.reasons == .markUnreadable)
      #expect(decision.markError?.code == .storeFromAnotherMachine)
      if case .opened = other.gate.openOffline() { Issue.record("opened on another machine") }
    }
    // Nothing was written by the refused checks.
    #expect(try Data(contentsOf: URL(fileURLWithPath: directory.appending("clock-mark"))) == bytes)
    // A reader opened on A refuses once the record is B's.
    guard case .opened(let reader) = a.gate.openOffline() else {
      Issue.record("expected the cache to open on A")
      return
    }
    try b.signIn()
    #expect(try marks.read().machine == Self.machineB)
    #expect(b.gate.checkEligibility().status == .fresh)
    #expect(a.gate.checkEligibility().markError?.code == .storeFromAnotherMachine)
    #expect {
      try reader.item(forKey: try CacheItemKey("token"))
    } throws: { error in
      let error = error as? OfflineReadError
      return error?.code == .markUnreadable
        && error?.markError?.code == .storeFromAnotherMachine
    }
  }

  @Test func aRecordWrittenBeforeBindingIsJudgedAsBeforeAndTheNextSignInBindsIt() throws {
    let marks = InMemoryClockMarkStore()
    let cache = InMemoryCacheStore()
    let wall = ManualWallClock(Self.start)
    let unbound = try Machine(
      nil, bootID: BootID(high: 1, low: 1), uptime: Self.day, wall: wall, marks: marks,
      cache: cache)
    let a = try Machine(
      Self.machineA, bootID: BootID(high: 1, low: 1), uptime: Self.day, wall: wall, marks: marks,
      cache: cache)
    try unbound.signIn()
    #expect(try marks.read().machine == nil)
    wall.advance(by: .seconds(60))
    #expect(a.gate.checkEligibility().status == .fresh)
    #expect(try marks.read().machine == nil, "an offline check never binds")
    try a.signIn()
    #expect(try marks.read().machine == Self.machineA)
  }

  /// The issue's ratchet: one store used from two machines with honest clocks. Each machine's
  /// boot id differs from the anchor another one wrote, so each check would count its whole
  /// uptime as time passed since the last sign-in; alternating ratchets the floor past real
  /// time and refuses an honest clock. Bound, the other machine's checks are refused and write
  /// nothing, and the honest machine stays fresh.
  @Test(arguments: [true, false])
  func twoMachinesAlternatingNeverRatchetTheFloor(_ bound: Bool) throws {
    let marks = InMemoryClockMarkStore()
    let cache = InMemoryCacheStore()
    let wall = ManualWallClock(Self.start)
    let a = try Machine(
      bound ? Self.machineA : nil, bootID: BootID(high: 1, low: 1), uptime: Self.day * 10,
      wall: wall, marks: marks, cache: cache, maxAge: Self.day * 7)
    let b = try Machine(
      bound ? Self.machineB : nil, bootID: BootID(high: 2, low: 2), uptime: Self.day * 3,
      wall: wall, marks: marks, cache: cache, maxAge: Self.day * 7)
    try a.signIn()
    var honestRefused = false
    for _ in 0..<6 {
      for machine in [b, a] {
        wall.advance(by: .seconds(600))
        machine.boot.advance(by: .seconds(600))
        let decision = machine.gate.checkEligibility()
        if machine.boot === a.boot, decision.status != .fresh { honestRefused = true }
      }
    }
    let floor = try marks.read().floor.lowerBound
    if bound {
      #expect(!honestRefused, "machine A's honest clock was refused")
      #expect(floor <= wall.now(), "the floor passed real time")
      #expect(b.gate.checkEligibility().markError?.code == .storeFromAnotherMachine)
    } else {
      // The control: unbound, the ratchet is real (this is what binding prevents).
      #expect(honestRefused)
      #expect(floor > wall.now().saturatingAdvanced(by: Self.day * 7))
    }
  }
}
