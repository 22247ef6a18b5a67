import Foundation
import OfflineTTLTesting
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

  /// A working directory whose name is not UTF-8 (`w` and the byte 0xFF) and, beside it, the
  /// directory `w` U+FFFD, whose name is that byte decoded with a replacement character: the
  /// store `s` in the first and a key file in `s` of the second are two places, and a sign-in
  /// seals the store with that key. Decoded with U+FFFD, the two store paths were one spelling
  /// and the key read as inside the store (`key_inside_store`, exit 74).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/sh"), "needs /bin/sh"))
  func aKeyBesideAStoreWhosePathIsNotUTF8IsNotInsideIt() throws {
    let binary = try BinaryRunner()
    let scratch = try TemporaryStoreDirectory(prefix: "offline-ttl-utf8-key")
    defer { scratch.remove() }
    let lookalike = scratch.path + "/w\u{FFFD}"
    try FileManager.default.createDirectory(
      atPath: lookalike + "/s", withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    try Data("payload".utf8).write(to: URL(fileURLWithPath: scratch.path + "/token"))
    // Runs the tool in `<scratch>/w\377` (made 0700 first).
    let launcher = [
      "/bin/sh", "-c",
      #"d=$(printf 'w\377') && cd "$SCRATCH" && mkdir -p -m 700 "$d" && cd "$d" && exec "$@""#,
      "sh",
    ]
    let seal = ["--seal", "file:" + lookalike + "/s/k"]
    let signIn = try binary.run(
      ["sign-in", "--store", "s", "--put", "token=" + scratch.path + "/token"] + seal,
      environment: ["SCRATCH": scratch.path], launcher: launcher)
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
    let read = try binary.run(
      ["read", "--store", "s", "--max-age", "1d", "token"] + seal,
      environment: ["SCRATCH": scratch.path], launcher: launcher)
    #expect(read.exitCode == 0, "\(read.standardError)")
    #expect(read.standardOutput == "payload")
    // The key is where it was named, and the store directory is the one named by the bytes.
    #expect(FileManager.default.fileExists(atPath: lookalike + "/s/k"))
    #expect(!FileManager.default.fileExists(atPath: lookalike + "/s/cache"))
  }
}
