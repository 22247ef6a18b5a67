import Foundation
import OfflineTTLTesting
import Testing

@_spi(Testing) @_spi(SystemCalls) @testable import OfflineTTL

#if canImport(Glibc)
  import Glibc
#endif

/// Each long-lived store value watches its files with one inotify instance, and the kernel
/// limits how many instances one user may hold (`fs.inotify.max_user_instances`, 128 by
/// default). When `inotify_init1` fails (`EMFILE` at that limit, `ENOSYS` without inotify), the
/// store falls back to the path without a watch: every repeated check reads its files again, and
/// the answers stay right. Injected through the syscall seam, so the test holds no instances.
@Suite struct ChangeWatchUnavailableTests {
  static let instanceLimit = Errno(rawValue: EMFILE)

  @Test(arguments: [Errno(rawValue: EMFILE), Errno(rawValue: ENOSYS)])
  func aCacheStoreWithoutAWatchReadsItsFilesAgainAndStaysRight(failure: Errno) throws {
    let (parent, path) = try StoreChangeWatchTests.makeStore(count: 3)
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    plan.fail(.inotify, occurrence: nil, with: failure)
    let store = DirectoryCacheStore(atPath: path, faults: plan)
    for _ in 0..<3 { #expect(try store.summary().count == 3) }
    #expect(plan.count(of: .inotify) >= 1, "a watch was tried")

    plan.resetCounts()
    #expect(try store.summary() == (try StoreChangeWatchTests.fresh(path).get()))
    #expect(plan.count(of: .pread) + plan.count(of: .openat) > 0, "the files are read again")

    // A change by another store value is seen at the next summary.
    try DirectoryCacheStoreKeptOpenTests.commit(path, count: 2, prefix: "new", offset: 500)
    let after = try store.summary()
    #expect(after.count == 5)
    #expect(after == (try StoreChangeWatchTests.fresh(path).get()))
  }

  @Test(arguments: [Errno(rawValue: EMFILE), Errno(rawValue: ENOSYS)])
  func aMarkStoreWithoutAWatchReadsTheRecordAgainAndStaysRight(failure: Errno) throws {
    let (parent, path) = try StoreChangeWatchTests.makeStore(count: 1)
    defer { parent.remove() }
    let plan = SyscallFaultPlan(allowsChangeWatch: true)
    plan.fail(.inotify, occurrence: nil, with: failure)
    let store = FileClockMarkStore(atPath: path, faults: plan)
    let first = try store.read()
    for _ in 0..<3 { #expect(try store.read() == first) }

    // Another store value raises the mark: the next read sees it.
    let later = first.mark.saturatingAdvanced(by: .seconds(3_600))
    _ = try FileClockMarkStore(atPath: path).observe(now: later)
    plan.resetCounts()
    #expect(try store.read().mark == later)
    #expect(plan.count(of: .pread) > 0, "the record is read again")
  }
}
