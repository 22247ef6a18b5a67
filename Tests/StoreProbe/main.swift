// A child process for the umask tests: one library operation per run on a directory store, with
// whatever umask and user it was started under (the library never sets the umask; only the
// command-line tool does), so tests can run the library as another user and under a umask that
// the test process itself must not change.
//
//   offline-ttl-store-probe <store> sign-in <key> <text> [<key-file>]
//   offline-ttl-store-probe <store> check [<key-file>]
//   offline-ttl-store-probe <store> read <key> [<key-file>]
//   offline-ttl-store-probe <store> reset [<key-file>]
//
// A key file seals the store (FileSealingKeyProvider; a sign-in creates a missing key).
// Prints `ok <status or text>` and exits 0, or `refused <status> <reasons> <store errors>`, or
// `error <error>`, and exits 1; 2 for a usage error.
import Foundation
import OfflineTTL

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
  print("usage: offline-ttl-store-probe <store> <command> [...]")
  exit(2)
}
let store = arguments[1]
let command = arguments[2]
let rest = Array(arguments.dropFirst(3))
let argumentCount = ["sign-in": 2, "check": 0, "read": 1, "reset": 0][command]
guard let argumentCount, rest.count == argumentCount || rest.count == argumentCount + 1 else {
  print("usage: unknown command or wrong arguments: \(command) \(rest)")
  exit(2)
}
let sealing: (any SealingKeyProvider)? =
  rest.count > argumentCount ? FileSealingKeyProvider(path: rest[argumentCount]) : nil

do {
  let gate = OfflineAccessGate(
    cache: DirectoryCacheStore(atPath: store, sealing: sealing),
    marks: FileClockMarkStore(atPath: store, sealing: sealing),
    policy: try EligibilityPolicy(maxAge: .seconds(86_400), usesBootClockFloor: false))
  switch command {
  case "sign-in":
    _ = try gate.beginOnlineSession(writing: [(try CacheItemKey(rest[0]), Data(rest[1].utf8))])
    print("ok signed-in")
  case "check":
    let decision = gate.checkEligibility()
    if decision.isFresh {
      print("ok \(decision.status)")
    } else {
      print(
        "refused \(decision.status) \(decision.reasons) mark: \(decision.markError as Any)"
          + " cache: \(decision.cacheError as Any)")
      exit(1)
    }
  case "read":
    switch gate.openOffline() {
    case .opened(let reader):
      guard let item = try reader.item(forKey: try CacheItemKey(rest[0])) else {
        print("error no item")
        exit(1)
      }
      print("ok \(String(decoding: item.payload, as: UTF8.self))")
    case .refused(let decision):
      print(
        "refused \(decision.status) \(decision.reasons) mark: \(decision.markError as Any)"
          + " cache: \(decision.cacheError as Any)")
      exit(1)
    }
  default:
    _ = try FileClockMarkStore(atPath: store, sealing: sealing).resetAfterOnlineSignIn(
      now: SystemWallClock().now())
    print("ok reset")
  }
} catch {
  print("error \(error)")
  exit(1)
}
