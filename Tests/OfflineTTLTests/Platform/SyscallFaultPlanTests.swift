import Foundation
@_spi(Testing) @_spi(SystemCalls) import OfflineTTL
import OfflineTTLTesting
import Testing

@Suite struct SyscallFaultPlanTests {
  @Test func failsOnlyTheNthCallOfTheGivenKind() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.fsync, occurrence: 2, with: .ioError)
    let system = Syscalls(faults: plan)
    let fd = try system.open(dir.appending("f"), [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(fd) }
    try system.fsync(fd)
    #expect(throws: Errno.ioError) { try system.fsync(fd) }
    try system.fsync(fd)
    #expect(plan.count(of: .fsync) == 3)
    #expect(plan.injected.map(\.kind) == [.fsync])
  }

  @Test func retriesAnInjectedInterruptAndSucceeds() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.pwrite, occurrence: 1, with: .interrupted)
    plan.fail(.pwrite, occurrence: 2, with: .interrupted, timing: .afterCall)
    let system = Syscalls(faults: plan)
    let fd = try system.open(dir.appending("f"), [.readWrite, .create], mode: 0o600)
    defer { system.closeIgnoringErrors(fd) }
    let written = try [UInt8](repeating: 9, count: 4).withUnsafeBytes { buffer in
      try system.pwrite(fd, buffer, at: 0)
    }
    #expect(written == 4)
    #expect(plan.count(of: .pwrite) == 3)
    #expect(try system.fstat(fd).size == 4)
  }

  @Test func beforeCallHasNoEffectAndAfterCallDoes() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.mkdir, occurrence: 1, with: .noSpace)
    plan.fail(.mkdir, occurrence: 2, with: .ioError, timing: .afterCall)
    let system = Syscalls(faults: plan)
    #expect(throws: Errno.noSpace) { try system.mkdir(dir.appending("a"), mode: 0o700) }
    #expect(!FileManager.default.fileExists(atPath: dir.appending("a")))
    #expect(throws: Errno.ioError) { try system.mkdir(dir.appending("b"), mode: 0o700) }
    #expect(FileManager.default.fileExists(atPath: dir.appending("b")))
  }

  @Test func closeIsNeverRetriedAndAlwaysReleasesTheDescriptor() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let plan = SyscallFaultPlan()
    plan.fail(.close, occurrence: 1, with: .interrupted)
    let system = Syscalls(faults: plan)
    let fd = try system.open(dir.appending("f"), [.readWrite, .create], mode: 0o600)
    let before = try Syscalls().fstat(fd)
    #expect(throws: Errno.interrupted) { try system.close(fd) }
    #expect(plan.count(of: .close) == 1)
    // Released: the number no longer names this test's file. Tests run in parallel, so another
    // thread may already have reused the number for another file (then fstat succeeds on that
    // one); only this test opens "f", so the same device and inode would mean it was not closed.
    do {
      let after = try Syscalls().fstat(fd)
      #expect(
        (after.device, after.inode) != (before.device, before.inode),
        "the descriptor still names the file after close")
    } catch {
      #expect(error == .badFileDescriptor)
    }
  }

  @Test func traceNumbersEachCallWithinItsKind() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let plan = SyscallFaultPlan()
    let system = Syscalls(faults: plan)
    let fd = try system.open(dir.appending("f"), [.readWrite, .create], mode: 0o600)
    try system.fsync(fd)
    try system.fsync(fd)
    try system.close(fd)
    #expect(plan.trace == [.open, .fsync, .fsync, .close])
    let (kind, number) = plan.occurrence(at: 2)
    #expect(kind == .fsync)
    #expect(number == 2)
    plan.resetCounts()
    #expect(plan.trace.isEmpty)
  }

  @Test func plansOfDifferentStoresDoNotInterfere() throws {
    let dir = try TemporaryStoreDirectory()
    defer { dir.remove() }
    let failing = SyscallFaultPlan()
    failing.fail(.fsync, occurrence: nil, with: .ioError)
    let quiet = SyscallFaultPlan()
    let fd = try Syscalls().open(dir.appending("f"), [.readWrite, .create], mode: 0o600)
    defer { Syscalls().closeIgnoringErrors(fd) }
    #expect(throws: Errno.ioError) { try Syscalls(faults: failing).fsync(fd) }
    try Syscalls(faults: quiet).fsync(fd)
    #expect(quiet.injected.isEmpty)
  }
}
