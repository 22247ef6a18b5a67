// A child process for the Secret Service tests: one store operation per run, or a bounded stress
// loop, so tests can run several processes and point each at another session bus.
//
//   offline-ttl-secret-probe <app-id> <lock-dir> read
//   offline-ttl-secret-probe <app-id> <lock-dir> observe <wall-ns>
//   offline-ttl-secret-probe <app-id> <lock-dir> reset <wall-ns>
//   offline-ttl-secret-probe <app-id> <lock-dir> stress <count> <seed> <low-ns> <high-ns>
//   offline-ttl-secret-probe <app-id> <lock-dir> lock
//   offline-ttl-secret-probe <app-id> <lock-dir> key-load | key-create   (the sealing key:
//     prints `ok SealingKey(check <hex>)` or `error <SealingKeyError>`)
//   offline-ttl-secret-probe <app-id> <lock-dir> exercise <rounds>   (every call of both stores,
//     failures included: the leak check runs this under valgrind, see Scripts/leak-check.sh)
//   offline-ttl-secret-probe <app-id> <lock-dir> first-use <threads>   (that many threads, let go
//     together, make this process's first libsecret calls at once: a reset and a read each, under
//     <app-id>.<thread>; prints `ok threads=<n>`)
//   offline-ttl-secret-probe <app-id> <lock-dir> types   (which of libsecret's enum and flags
//     types are registered before and after one store read: prints `before=<n> after=<n>
//     missing=<names>`; any result of the read itself is fine)
//
// Prints `ok generation=<g> mark=<ns>` or `error <ClockMarkStoreError>` and `elapsed_ms=<n>`;
// exit 0, 1 (store error) or 2 (usage, or built without the SecretService trait).
// OFFLINE_TTL_PROBE_TIMEOUT_MS sets the store's call time limit (default 10 000),
// OFFLINE_TTL_PROBE_LOCK_TIMEOUT_MS its lock-file limit (default 30 000, the library's).
#if canImport(Glibc)
  import Glibc
#endif

#if SecretService
  import Foundation
  import OfflineTTL
  import OfflineTTLCommandLine
  import OfflineTTLSecretService
  import OfflineTTLTestDoubles
  import Synchronization

  func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
  }

  func instant(_ text: String) -> WallClockInstant {
    WallClockInstant(nanosecondsSinceEpoch: Int64(text) ?? 0)
  }

  // CommandLine.arguments is empty under libfaketime; ProcessArguments reads the kernel's copy.
  let arguments = ProcessArguments.current()
  let timeout = getenv("OFFLINE_TTL_PROBE_TIMEOUT_MS").flatMap { Int64(String(cString: $0)) }
  let lockTimeout = getenv("OFFLINE_TTL_PROBE_LOCK_TIMEOUT_MS").flatMap {
    Int64(String(cString: $0))
  }
  guard arguments.count >= 4,
    let configuration = try? SecretServiceStoreConfiguration(
      applicationID: arguments[1], lockDirectory: arguments[2],
      timeout: .milliseconds(timeout ?? 10_000),
      lockTimeout: .milliseconds(lockTimeout ?? 30_000))
  else {
    print("usage: offline-ttl-secret-probe <app-id> <lock-dir> <command> ...")
    exit(2)
  }
  let store = SecretServiceClockMarkStore(configuration: configuration)
  let started = monotonicMilliseconds()
  var status: Int32 = 0
  do {
    switch arguments[3] {
    case "read":
      let record = try store.read()
      print("ok generation=\(record.generation) mark=\(record.mark.nanosecondsSinceEpoch)")
    case "observe" where arguments.count == 5:
      let transition = try store.observe(now: instant(arguments[4]))
      print(
        "ok generation=\(transition.current.generation) "
          + "mark=\(transition.current.mark.nanosecondsSinceEpoch)")
    case "reset" where arguments.count == 5:
      let record = try store.resetAfterOnlineSignIn(now: instant(arguments[4]))
      print("ok generation=\(record.generation) mark=\(record.mark.nanosecondsSinceEpoch)")
    case "stress" where arguments.count == 8:
      // Random walls in [low, high]; every transition must start at or above the mark this
      // process last saw, since nothing but a sign-in may lower it.
      var generator = SplitMix64(seed: UInt64(arguments[5]) ?? 1)
      let low = Int64(arguments[6]) ?? 0
      let span = UInt64(max((Int64(arguments[7]) ?? 0) - low, 1))
      var lastSeen = Int64.min
      var highestWall = Int64.min
      for _ in 0..<(Int(arguments[4]) ?? 0) {
        let wall = low + Int64(generator.next() % span)
        highestWall = max(highestWall, wall)
        let transition = try store.observe(now: WallClockInstant(nanosecondsSinceEpoch: wall))
        let previous = transition.previous.mark.nanosecondsSinceEpoch
        let current = transition.current.mark.nanosecondsSinceEpoch
        guard previous >= lastSeen, current >= previous, current >= wall else {
          print("violation last_seen=\(lastSeen) previous=\(previous) current=\(current)")
          exit(3)
        }
        lastSeen = current
      }
      print("ok highest_wall=\(highestWall) last_seen=\(lastSeen)")
    case "exercise" where arguments.count == 5:
      let cache = SecretServiceCacheStore(configuration: configuration)
      let key = CacheItemKey("item")
      for round in 0..<(Int(arguments[4]) ?? 1) {
        let wall = WallClockInstant(nanosecondsSinceEpoch: Int64(round + 1) * 1_000_000_000)
        _ = try store.resetAfterOnlineSignIn(now: wall)
        _ = try store.observe(now: wall)
        _ = try store.createFirstMark(now: wall)
        _ = try store.read()
        var changes = CacheChanges()
        changes.write(key, Data(repeating: UInt8(round & 0xFF), count: 1000), writtenAt: wall)
        try cache.commit(changes)
        _ = try cache.item(forKey: key)
        _ = try cache.item(forKey: CacheItemKey("missing"))
        _ = try cache.keys()
        _ = try cache.summary()
        var removal = CacheChanges()
        removal.delete(key)
        try cache.commit(removal)
      }
      // A failure path: an absent mark under another application id.
      let other = SecretServiceClockMarkStore(
        configuration: try SecretServiceStoreConfiguration(
          applicationID: arguments[1] + ".absent", lockDirectory: arguments[2]))
      if (try? other.observe(now: .init(nanosecondsSinceEpoch: 1))) != nil { exit(3) }
      print("ok exercised")
    case "first-use" where arguments.count == 5:
      let threads = max(Int(arguments[4]) ?? 1, 1)
      let failures = FirstUse.run(threads: threads) { index in
        let own = SecretServiceClockMarkStore(
          configuration: try SecretServiceStoreConfiguration(
            applicationID: "\(arguments[1]).\(index)", lockDirectory: arguments[2],
            timeout: .milliseconds(timeout ?? 10_000)))
        let wall = WallClockInstant(nanosecondsSinceEpoch: Int64(index + 1) * 1_000_000_000)
        _ = try own.resetAfterOnlineSignIn(now: wall)
        guard try own.read().mark == wall else { throw FirstUse.Mismatch() }
      }
      guard failures.isEmpty else {
        print("error \(failures.joined(separator: "; "))")
        exit(1)
      }
      print("ok threads=\(threads)")
    case "types":
      let before = LibSecretEnumTypes.registered()
      _ = try? store.read()
      let after = LibSecretEnumTypes.registered()
      let missing = LibSecretEnumTypes.names.filter { !after.contains($0) }
      print(
        "before=\(before.count) after=\(after.count) "
          + "missing=\(missing.isEmpty ? "none" : missing.joined(separator: ","))")
    case "key-load", "key-create":
      let provider = SecretServiceSealingKeyProvider(configuration: configuration)
      let key = try arguments[3] == "key-load" ? provider.loadKey() : provider.loadOrCreateKey()
      print("ok \(key)")
    case "lock":
      try SecretServiceKeyring.lockDefaultCollection(configuration: configuration)
      print("ok locked")
    default:
      print("usage: unknown command \(arguments[3])")
      exit(2)
    }
  } catch {
    print("error \(error)")
    status = 1
  }
  print("elapsed_ms=\(monotonicMilliseconds() - started)")
  exit(status)

  /// libsecret's enum and flags types by name, looked up with GLib's `g_type_from_name` (found
  /// with dlsym, so the probe needs no GLib module of its own).
  enum LibSecretEnumTypes {
    static let names = [
      "SecretBackendFlags", "SecretCollectionCreateFlags", "SecretCollectionFlags", "SecretError",
      "SecretItemCreateFlags", "SecretItemFlags", "SecretSchemaAttributeType", "SecretSchemaFlags",
      "SecretSchemaType", "SecretSearchFlags", "SecretServiceFlags",
    ]

    /// The names that GLib knows as types now.
    static func registered() -> [String] {
      typealias FromName = @convention(c) (UnsafePointer<CChar>) -> UInt
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "g_type_from_name") else {
        print("error g_type_from_name not found")
        exit(1)
      }
      let fromName = unsafeBitCast(symbol, to: FromName.self)
      return names.filter { fromName($0) != 0 }
    }
  }

  /// Threads released together by a barrier, each running `body` once.
  enum FirstUse {
    struct Mismatch: Error {}

    /// Runs `body(0..<threads)` on that many threads started before any of them may go on, so
    /// their first calls into the store meet. Returns one line per thread that threw.
    static func run(threads: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [String] {
      let failures = Mutex<[String]>([])
      let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
      pthread_barrier_init(barrier, nil, UInt32(threads))
      let group = DispatchGroup()
      let unsafeBarrier = UnsafeSendable(barrier)
      for index in 0..<threads {
        group.enter()
        Thread.detachNewThread {
          pthread_barrier_wait(unsafeBarrier.value)
          do { try body(index) } catch {
            failures.withLock { $0.append("thread \(index): \(error)") }
          }
          group.leave()
        }
      }
      group.wait()
      pthread_barrier_destroy(barrier)
      barrier.deallocate()
      return failures.withLock { $0 }
    }
  }

  /// A pointer handed to threads that only use it between the barrier's set-up and tear-down.
  struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
  }
#else
  print("offline-ttl-secret-probe: built without the SecretService trait")
  exit(2)
#endif
