import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

/// A machine id that is there but cannot be read (too many open files, no memory, an I/O error,
/// no permission) is not evidence of another machine: a bound record is refused as
/// `machine_id_unreadable` with the error number, nothing is written, and a sign-in is not
/// recorded unbound. A missing or invalid id keeps its meaning (another machine, or none).
@Suite struct MachineIdentityReadTests {
  static let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
  static let resourceErrors: [Errno] = [
    Errno(rawValue: EMFILE), Errno(rawValue: ENFILE), Errno(rawValue: ENOMEM), .ioError,
    .permissionDenied,
  ]

  /// A machine-id file holding `id` in a scratch directory.
  func idFile(_ id: String, in directory: TemporaryStoreDirectory, name: String = "machine-id")
    throws -> String
  {
    let path = directory.appending(name)
    try Data((id + "\n").utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test(arguments: [SyscallKind.open, .fstat, .pread], resourceErrors)
  func aResourceErrorIsThrownWithItsErrnoNeverNone(_ kind: SyscallKind, _ errno: Errno) throws {
    let directory = try TemporaryStoreDirectory(prefix: "machine-id-read")
    defer { directory.remove() }
    let first = try idFile("0000000000000000000000000000000a", in: directory)
    let second = try idFile("0000000000000000000000000000000b", in: directory, name: "dbus")
    let plan = SyscallFaultPlan()
    plan.fail(kind, occurrence: 1, with: errno)
    let source = SystemMachineIdentity(paths: [first, second], faults: plan)
    #expect(throws: MachineIDReadError(path: first, errno: errno.rawValue)) {
      _ = try source.read()
    }
    #expect(plan.injected.count == 1)
    // The next read, without the fault, gives the id (the fallback was never consulted).
    #expect(try source.read() == MachineID(high: 0, low: 0xA))
    // current() keeps its optional shape: nil while unreadable.
    let failing = SyscallFaultPlan()
    failing.fail(kind, occurrence: nil, with: errno)
    #expect(SystemMachineIdentity(paths: [first], faults: failing).current() == nil)
  }

  @Test func aMissingFileStillFallsBackAndNeitherIsNone() throws {
    let directory = try TemporaryStoreDirectory(prefix: "machine-id-read")
    defer { directory.remove() }
    let missing = directory.appending("missing")
    let second = try idFile("0000000000000000000000000000000b", in: directory)
    #expect(
      try SystemMachineIdentity(paths: [missing, second], faults: nil).read()
        == MachineID(high: 0, low: 0xB))
    #expect(try SystemMachineIdentity(paths: [missing], faults: nil).read() == nil)
    // An injected ENOENT is a missing file too.
    let plan = SyscallFaultPlan()
    plan.fail(.open, occurrence: 1, with: .noSuchFileOrDirectory)
    #expect(
      try SystemMachineIdentity(paths: [second, second], faults: plan).read()
        == MachineID(high: 0, low: 0xB))
  }

  @Test(arguments: resourceErrors)
  func aBoundRecordIsRefusedAsUnreadableIDWithTheErrnoAndNothingWritten(_ errno: Errno) throws {
    let directory = try TemporaryStoreDirectory(prefix: "machine-id-gate")
    defer { directory.remove() }
    let idPath = try idFile("0000000000000000000000000000000a", in: directory)
    let storePath = directory.appending("store")
    let wall = ManualWallClock(Self.start)
    let boot = ManualBootClock(bootID: BootID(high: 1, low: 1), sinceBoot: .seconds(86_400))
    let policy = try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: true)
    func gate(_ machine: SystemMachineIdentity) -> OfflineAccessGate {
      OfflineAccessGate(
        cache: DirectoryCacheStore(atPath: storePath),
        marks: FileClockMarkStore(atPath: storePath), policy: policy,
        clocks: Clocks(wall: wall, boot: boot, machine: machine))
    }
    let readable = gate(SystemMachineIdentity(paths: [idPath], faults: nil))
    let session = try readable.beginOnlineSession()
    try session.write(CacheItemKey("token"), Data("secret".utf8))
    #expect(
      try FileClockMarkStore(atPath: storePath).read().machine == MachineID(high: 0, low: 0xA))
    let record = URL(fileURLWithPath: storePath + "/clock-mark")
    let before = try Data(contentsOf: record)

    let plan = SyscallFaultPlan()
    plan.fail(.open, occurrence: nil, with: errno)
    let unreadable = gate(SystemMachineIdentity(paths: [idPath], faults: plan))
    wall.advance(by: .seconds(60))
    boot.advance(by: .seconds(60))
    let decision = unreadable.checkEligibility()
    #expect(decision.status == .expired)
    #expect(decision.reasons == .markUnreadable)
    #expect(
      decision.markError?.code == .machineIDUnreadable, "\(String(describing: decision.markError))")
    #expect(decision.markError?.errno == errno.rawValue)
    #expect(decision.markError?.code != .storeFromAnotherMachine)
    #expect(decision.markError?.description.contains("cannot be read") == true)
    if case .opened = unreadable.openOffline() { Issue.record("opened without a machine id") }
    // A sign-in cannot bind the record either: refused, nothing written.
    #expect(throws: (any Error).self) { _ = try unreadable.beginOnlineSession() }
    #expect(try Data(contentsOf: record) == before, "nothing was written")
    // Once the id reads again, the same store is fresh.
    #expect(readable.checkEligibility().status == .fresh)
  }

  /// An observation made by hand (`mark observe --now`, ``ClockMarkStore/observe(now:)``)
  /// reads the id the same way: a resource error is carried as `machineError` and the bound
  /// record refuses it as `machine_id_unreadable`, never as another machine's; nothing written.
  @Test(arguments: resourceErrors)
  func anObservationByHandCarriesTheReadErrorAndIsNotTakenForAnotherMachine(_ errno: Errno)
    throws
  {
    let directory = try TemporaryStoreDirectory(prefix: "machine-id-observe")
    defer { directory.remove() }
    let idPath = try idFile("0000000000000000000000000000000a", in: directory)
    let store = FileClockMarkStore(atPath: directory.appending("store"))
    let readable = SystemMachineIdentity(paths: [idPath], faults: nil)
    _ = try store.resetAfterOnlineSignIn(
      ClockObservation(wall: Self.start, readingMachineFrom: readable))
    let record = URL(fileURLWithPath: directory.appending("store/clock-mark"))
    let before = try Data(contentsOf: record)

    let plan = SyscallFaultPlan()
    plan.fail(.open, occurrence: nil, with: errno)
    let observation = ClockObservation(
      wall: Self.start.saturatingAdvanced(by: .seconds(60)),
      readingMachineFrom: SystemMachineIdentity(paths: [idPath], faults: plan))
    #expect(observation.machine == nil)
    #expect(observation.machineError == MachineIDReadError(path: idPath, errno: errno.rawValue))
    #expect {
      _ = try store.observe(observation)
    } throws: { error in
      (error as? StoreError)?.code == .machineIDUnreadable
        && (error as? StoreError)?.errno == errno.rawValue
    }
    #expect(try Data(contentsOf: record) == before, "nothing was written")
    // Read again, the same observation is this machine's and raises the mark.
    let again = ClockObservation(
      wall: Self.start.saturatingAdvanced(by: .seconds(60)), readingMachineFrom: readable)
    #expect(again.machineError == nil)
    #expect(
      try store.observe(again).current.mark == Self.start.saturatingAdvanced(by: .seconds(60)))
  }
}
