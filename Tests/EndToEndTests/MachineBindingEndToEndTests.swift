import Foundation
import OfflineTTLTesting
import Testing

@testable import OfflineTTL

/// Whether `/etc/machine-id` is a file that a namespace can bind another machine's id over.
let machineIDFileIsPresent: Bool = {
  var info = stat()
  return lstat("/etc/machine-id", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
}()

/// Evidence belongs to one device, on the built binary: two "machines" are two mount
/// namespaces showing their own `/etc/machine-id` and boot id over one shared store. A record
/// of another machine is refused (`store_from_another_machine`) and not a byte of the store
/// changes; a sign-in on the new machine rebinds it; and alternating between the machines never
/// ratchets the boot-clock floor past an honest clock (the unbound control shows that it would).
@Suite(
  .enabled(if: MountNamespace.isUsable, "needs unshare (util-linux) with user+mount namespaces"),
  .enabled(if: machineIDFileIsPresent, "needs /etc/machine-id (a regular file) to bind over"))
struct MachineBindingEndToEndTests {
  /// One machine: its id file (or none readable) and its boot id file.
  struct Machine {
    var bindings: [(source: String, target: String)]

    /// A machine with a valid id and boot id, both written into `scratch`.
    init(_ name: String, id: String, bootID: String, scratch: TemporaryStoreDirectory) throws {
      let idFile = scratch.appending("machine-id-" + name)
      let bootFile = scratch.appending("boot-id-" + name)
      try Data((id + "\n").utf8).write(to: URL(fileURLWithPath: idFile))
      try Data((bootID + "\n").utf8).write(to: URL(fileURLWithPath: bootFile))
      bindings = [
        (source: idFile, target: "/etc/machine-id"),
        (source: bootFile, target: "/proc/sys/kernel/random/boot_id"),
      ]
    }

    /// A machine whose id cannot be read: garbage over both id files that exist; with its own
    /// boot id, or this machine's real one (`nil`).
    init(unreadableIn scratch: TemporaryStoreDirectory, bootID: String?) throws {
      let garbage = scratch.appending("machine-id-garbage")
      try Data("not a machine id\n".utf8).write(to: URL(fileURLWithPath: garbage))
      bindings = SystemMachineIdentity.defaultPaths.filter {
        FileManager.default.fileExists(atPath: $0)
      }.map { (source: garbage, target: $0) }
      if let bootID {
        let bootFile = scratch.appending("boot-id-unreadable-" + bootID)
        try Data((bootID + "\n").utf8).write(to: URL(fileURLWithPath: bootFile))
        bindings.append((source: bootFile, target: "/proc/sys/kernel/random/boot_id"))
      }
    }

    func run(_ arguments: [String]) throws -> BinaryResult {
      try MountNamespace.run(arguments, binding: bindings)
    }
  }

  static let idA = String(repeating: "a", count: 32)
  static let idB = String(repeating: "b", count: 32)
  static let bootA = "11111111-1111-4111-8111-111111111111"
  static let bootB = "22222222-2222-4222-8222-222222222222"

  /// Every file's bytes under `store`.
  static func contents(_ store: String) -> [String: Data] {
    var result: [String: Data] = [:]
    for name in FileManager.default.subpaths(atPath: store) ?? [] {
      var isDirectory: ObjCBool = false
      let path = store + "/" + name
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
        !isDirectory.boolValue
      else { continue }
      result[name] = try? Data(contentsOf: URL(fileURLWithPath: path))
    }
    return result
  }

  static func status(_ store: String) -> [String] {
    ["status", "--store", store, "--max-age", "7d", "--json"]
  }

  /// Expects `result` to be a `status --json` refused as a record of another machine.
  static func expectAnotherMachine(
    _ result: BinaryResult, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    #expect(
      result.exitCode == 1, "\(result.standardOutput) \(result.standardError)",
      sourceLocation: sourceLocation)
    let object = try result.jsonObject()
    #expect(
      object["reasons"] as? [String] == ["mark_unreadable"], "\(object)",
      sourceLocation: sourceLocation)
    let error = object["mark_error"] as? String ?? ""
    #expect(
      error.hasPrefix("store_from_another_machine:"), "\(error)", sourceLocation: sourceLocation)
  }

  @Test func aStoreFromAnotherMachineIsRefusedUntouchedUntilASignInThereRebindsIt() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-machine")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    let a = try Machine("a", id: Self.idA, bootID: Self.bootA, scratch: scratch)
    let b = try Machine("b", id: Self.idB, bootID: Self.bootB, scratch: scratch)

    let signIn = try a.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    #expect(try FileClockMarkStore(atPath: store).read().machine?.description == Self.idA)
    #expect(try a.run(Self.status(store)).exitCode == 0)

    let before = Self.contents(store)
    try Self.expectAnotherMachine(try b.run(Self.status(store)))
    let read = try b.run(["read", "--store", store, "--max-age", "7d", "token"])
    #expect(read.exitCode == 1, "\(read.standardError)")
    #expect(read.standardOutput.isEmpty, "no bytes are served on another machine")
    #expect(read.standardError.contains("store_from_another_machine"), "\(read.standardError)")
    let observe = try b.run(["mark", "observe", "--store", store, "--now", "4000000000"])
    #expect(observe.exitCode == 1, "\(observe.standardOutput) \(observe.standardError)")
    #expect(observe.standardError.contains("store_from_another_machine"))
    #expect(Self.contents(store) == before, "a refused machine changed the store")

    // An online sign-in on B rebinds the record to B: fresh there, refused on A.
    let rebind = try b.run(["sign-in", "--store", store])
    #expect(rebind.exitCode == 0, "\(rebind.standardError)")
    #expect(try FileClockMarkStore(atPath: store).read().machine?.description == Self.idB)
    let fresh = try b.run(Self.status(store))
    #expect(fresh.exitCode == 0, "\(fresh.standardOutput) \(fresh.standardError)")
    #expect(
      try b.run(["read", "--store", store, "--max-age", "7d", "token"]).standardOutput
        == "secret-token")
    try Self.expectAnotherMachine(try a.run(Self.status(store)))
  }

  /// The ratchet on the binary. Each machine has its own boot id, so each check of a
  /// record anchored in the other machine's boot carries the floor forward by this machine's
  /// whole uptime. Bound, the other machine's checks are refused and write nothing: the honest
  /// machine stays fresh however often they alternate. Unbound (no id readable on either, the
  /// control), the same alternation pushes the floor past real time and refuses the honest
  /// clock: what binding prevents.
  @Test(arguments: [true, false])
  func alternatingMachinesNeverRatchetTheFloorOfABoundRecord(_ bound: Bool) throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-ratchet")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    let a: Machine
    let b: Machine
    if bound {
      a = try Machine("a", id: Self.idA, bootID: Self.bootA, scratch: scratch)
      b = try Machine("b", id: Self.idB, bootID: Self.bootB, scratch: scratch)
    } else {
      a = try Machine(unreadableIn: scratch, bootID: Self.bootA)
      b = try Machine(unreadableIn: scratch, bootID: Self.bootB)
    }
    // A signs in, then B rebinds (bound) or simply signs in (unbound): B is the honest user.
    #expect(try a.run(["sign-in", "--store", store, "--put", "token=\(token)"]).exitCode == 0)
    #expect(try b.run(["sign-in", "--store", store]).exitCode == 0)
    #expect((try FileClockMarkStore(atPath: store).read().machine == nil) == !bound)
    var honestExits: [Int32?] = []
    var otherExits: [Int32?] = []
    var reasons: [String] = []
    for _ in 0..<3 {
      let other = try a.run(Self.status(store))
      otherExits.append(other.exitCode)
      if bound { try Self.expectAnotherMachine(other) }
      let honest = try b.run(Self.status(store))
      honestExits.append(honest.exitCode)
      for result in [other, honest] {
        reasons += (try? result.jsonObject()["reasons"] as? [String]) ?? []
      }
    }
    if bound {
      #expect(honestExits == [0, 0, 0], "the honest machine was refused: \(reasons)")
      #expect(!reasons.contains("clock_behind_elapsed_time"), "\(reasons)")
    } else {
      #expect(
        (honestExits + otherExits).contains(1),
        "the unbound control did not ratchet: \(honestExits) \(otherExits)")
      #expect(reasons.contains("clock_behind_elapsed_time"), "\(reasons)")
    }
  }

  /// A bound record met where no machine id can be read (garbage over `/etc/machine-id` and its
  /// fallback) is refused and left untouched; a sign-in there writes an unbound record (there
  /// is nothing to bind to), judged as before binding existed; a sign-in where the id is
  /// readable binds it again.
  @Test func aBoundRecordWhereNoMachineIDCanBeReadIsRefused() throws {
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-e2e-machine-garbage")
    defer { scratch.remove() }
    let store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    let runner = try BinaryRunner()
    let unreadable = try Machine(unreadableIn: scratch, bootID: nil)
    #expect(try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"]).exitCode == 0)
    let here = SystemMachineIdentity().current()
    #expect(try FileClockMarkStore(atPath: store).read().machine == here)
    try #require(here != nil, "this machine's id cannot be read outside the namespace")

    let before = Self.contents(store)
    try Self.expectAnotherMachine(try unreadable.run(Self.status(store)))
    #expect(Self.contents(store) == before)

    #expect(try unreadable.run(["sign-in", "--store", store]).exitCode == 0)
    #expect(try FileClockMarkStore(atPath: store).read().machine == nil)
    #expect(try unreadable.run(Self.status(store)).exitCode == 0)
    #expect(try runner.run(Self.status(store)).exitCode == 0)
    #expect(try runner.run(["sign-in", "--store", store]).exitCode == 0)
    #expect(try FileClockMarkStore(atPath: store).read().machine == here)
  }
}
