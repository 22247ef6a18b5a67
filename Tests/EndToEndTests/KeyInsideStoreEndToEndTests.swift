import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Outside test 2, F8, on the binary: a key file inside the store, reached through a bind mount
/// of the store (the same directory under another path, which no spelling of the paths shows),
/// is refused with `key_inside_store` by every command, offline and online; the store itself,
/// reached through a bind mount while the key is named inside the real store, too. The mounts
/// are made in a private user and mount namespace (`unshare -rm`), so no privileges are needed
/// and nothing else on the machine sees them.
@Suite struct KeyInsideStoreEndToEndTests {
  @Test(.enabled(if: MountNamespace.isUsable, "needs unshare -rm (util-linux, user namespaces)"))
  func aKeyInsideTheStoreReachedThroughABindMountIsRefused() throws {
    let binary = try BinaryRunner()
    let scene = try Scene(binary: binary, sealed: true)
    defer { scene.remove() }
    let key = scene.root + "/seal.key"
    let inside = scene.store + "/k.key"
    try FileManager.default.copyItem(atPath: key, toPath: inside)
    let mounted = scene.root + "/bind"
    try FileManager.default.createDirectory(atPath: mounted, withIntermediateDirectories: false)
    let before = Scene.snapshot(scene.store)
    // (store, key): the key reached through the bind mount, then the store reached through it.
    let pairs = [(scene.store, mounted + "/k.key"), (mounted, inside)]
    for (store, keyPath) in pairs {
      let seal = ["--seal", "file:" + keyPath]
      let commands: [([String], Int32)] = [
        (["status", "--store", store, "--max-age", "7d"] + seal, 1),
        (["read", "--store", store, "--max-age", "7d", "token"] + seal, 1),
        (["sign-in", "--store", store, "--put", "token=\(scene.newInput)"] + seal, 74),
      ]
      for (arguments, expected) in commands {
        let result = try MountNamespace.run(
          arguments, binding: [(source: scene.store, target: mounted)])
        let label = "\(arguments.first!) --store \(store) --seal file:\(keyPath)"
        #expect(result.exitCode == expected, "\(label): \(result.standardError)")
        #expect(
          (result.standardOutput + result.standardError).contains("key_inside_store"),
          "\(label): \(result.standardOutput) \(result.standardError)")
        #expect(!result.standardOutput.contains(Scene.tokenPayload), "\(label): served")
      }
    }
    // Refused before anything was written; the real key still opens the store.
    #expect(Scene.snapshot(scene.store).keys.sorted() == before.keys.sorted())
    let read = try binary.run(scene.read("token"))
    #expect(read.exitCode == 0 && read.standardOutput == Scene.tokenPayload)
  }
}
