import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// Online writers that overlap stamp their items under the item store's writer lock, after every
/// writer they waited for (outside test 6, F2: sign-ins stamped before the lock committed items
/// older than the mark of the sign-in they had waited for, and the cache was refused as
/// `too_old` right after the last sign-in). Each backend that ships: in memory, the directory
/// store unsealed and sealed (the Secret Service one runs in SecretServiceCacheStoreTests).
@Suite struct OverlappingWritersTests {
  enum Backend: String, CaseIterable, CustomStringConvertible {
    case memory, directory, sealedDirectory
    var description: String { rawValue }
  }

  /// Runs `body` with an empty item store and mark store of `backend`.
  func withStores(
    _ backend: Backend,
    _ body: (any CacheItemStore, any ClockMarkStore) throws -> Void
  ) throws {
    switch backend {
    case .memory:
      try body(InMemoryCacheStore(), InMemoryClockMarkStore())
    case .directory, .sealedDirectory:
      let root = try TemporaryStoreDirectory(prefix: "overlapping")
      defer { root.remove() }
      let store = root.path + "/store"
      let sealing: (any SealingKeyProvider)? =
        backend == .sealedDirectory ? FileSealingKeyProvider(path: root.path + "/key") : nil
      try body(
        DirectoryCacheStore(atPath: store, sealing: sealing),
        FileClockMarkStore(atPath: store, sealing: sealing))
    }
  }

  @Test(arguments: Backend.allCases)
  func overlappingSignInsStampAfterTheSignInsTheyWaitedFor(_ backend: Backend) throws {
    try withStores(backend) { cache, marks in
      try OverlappingWritersCheck.signIns(threads: 8, cache: cache, marks: marks)
    }
  }

  @Test(arguments: Backend.allCases)
  func overlappingSessionWritesStampAfterTheWritesTheyWaitedFor(_ backend: Backend) throws {
    try withStores(backend) { cache, marks in
      try OverlappingWritersCheck.sessionWrites(threads: 8, cache: cache, marks: marks)
    }
  }
}
