import Foundation
import OfflineTTL
import OfflineTTLTesting

/// A gate over one real store directory: a `DirectoryCacheStore` and a `FileClockMarkStore` in
/// `store`, sealed with the key file `keyPath` when `sealed`, a manual clock and a one-day max
/// age without the boot-clock floor. Tests swap in their own item or mark store to hook a call.
struct DirectoryGateFixture {
  let root: TemporaryStoreDirectory
  let store: String
  let keyPath: String
  let sealed: Bool
  let clock = ManualWallClock(GateFixture.start)
  let policy: EligibilityPolicy

  init(prefix: String = "directory-gate", sealed: Bool = false) throws {
    root = try TemporaryStoreDirectory(prefix: prefix)
    store = root.path + "/store"
    keyPath = root.path + "/key"
    self.sealed = sealed
    policy = try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false)
  }

  /// The key-file provider when sealed, else `nil`.
  var provider: (any SealingKeyProvider)? {
    sealed ? FileSealingKeyProvider(path: keyPath) : nil
  }

  /// A gate over new store values of `store` (or the stores given).
  func gate(cache: (any CacheItemStore)? = nil, marks: (any ClockMarkStore)? = nil)
    -> OfflineAccessGate
  {
    OfflineAccessGate(
      cache: cache ?? DirectoryCacheStore(atPath: store, sealing: provider),
      marks: marks ?? FileClockMarkStore(atPath: store, sealing: provider),
      policy: policy, clock: clock)
  }

  /// The one-step sign-in writing `items` (key → text), through `gate` or a new one.
  func signIn(_ items: [String: String], gate: OfflineAccessGate? = nil) throws {
    _ = try (gate ?? self.gate()).beginOnlineSession(
      writing: items.sorted { $0.key < $1.key }.map {
        (try CacheItemKey($0.key), Data($0.value.utf8))
      })
  }
}
