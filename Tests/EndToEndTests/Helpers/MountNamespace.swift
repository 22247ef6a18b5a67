import Foundation
import OfflineTTLTesting

/// Runs the built `offline-ttl` in a private user and mount namespace (`unshare -rm`, no
/// privileges needed) where some system files show other contents: bind mounts made inside the
/// namespace only, so the rest of the machine (and every other test) sees nothing.
///
/// Used to hide the boot id (`/proc/sys/kernel/random/boot_id`) and to stand in for another
/// machine (`/etc/machine-id`).
enum MountNamespace {
  /// Whether `unshare -rm` can make a user and mount namespace here and bind a file over
  /// another inside it (util-linux installed, user namespaces allowed).
  static let isUsable: Bool = {
    guard toolPath("unshare") != nil,
      let scratch = try? TemporaryStoreDirectory(prefix: "offline-ttl-unshare-probe")
    else { return false }
    defer { scratch.remove() }
    let source = scratch.appending("source")
    let target = scratch.appending("target")
    guard (try? Data("probe\n".utf8).write(to: URL(fileURLWithPath: source))) != nil,
      (try? Data().write(to: URL(fileURLWithPath: target))) != nil,
      let result = try? BinaryRunner(path: "/usr/bin/env").run(
        [
          "unshare", "-rm", "sh", "-c",
          "mount --bind \(quoted(source)) \(quoted(target)) && grep -q probe \(quoted(target))",
        ])
    else { return false }
    return result.exitCode == 0
  }()

  /// Runs `offline-ttl arguments` after binding each `source` over its `target`, in order.
  ///
  /// - Parameters:
  ///   - arguments: The command's arguments.
  ///   - bindings: `(source, target)` pairs: a file over a file, or a directory over a
  ///     directory; both must exist.
  ///   - timeout: How long the whole run may take.
  /// - Returns: The result (a failed mount exits with `mount`'s status and says so on stderr).
  static func run(
    _ arguments: [String], binding bindings: [(source: String, target: String)],
    timeout: Duration = BinaryRunner.hangBound
  ) throws -> BinaryResult {
    let binary = try BinaryRunner().executable.path
    let mounts = bindings.map { "mount --bind \(quoted($0.source)) \(quoted($0.target))" }
    let command = ([binary] + arguments).map(quoted).joined(separator: " ")
    return try BinaryRunner(path: "/usr/bin/env").run(
      ["unshare", "-rm", "sh", "-c", (mounts + ["exec \(command)"]).joined(separator: " && ")],
      timeout: timeout)
  }

  /// Bindings that put a directory where the file `path` stands: its parent shows a directory
  /// (`scratch/mirror`) of symbolic links to every other entry of the real parent (bound at
  /// `scratch/real`), and `path`'s name is an empty directory there. A bind mount cannot put a
  /// directory over a file; this is the way round it.
  ///
  /// - Parameters:
  ///   - path: An absolute path of a file whose parent the namespace may show otherwise
  ///     (`/etc/machine-id`).
  ///   - scratch: An empty directory of the test's own.
  /// - Returns: The two bindings, in order, for ``run(_:binding:timeout:)``.
  static func directory(inPlaceOf path: String, scratch: String) throws -> [(
    source: String, target: String
  )] {
    let files = FileManager.default
    let parent = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let real = scratch + "/real"
    let mirror = scratch + "/mirror"
    try files.createDirectory(atPath: real, withIntermediateDirectories: true)
    try files.createDirectory(atPath: mirror + "/" + name, withIntermediateDirectories: true)
    for entry in try files.contentsOfDirectory(atPath: parent) where entry != name {
      try files.createSymbolicLink(
        atPath: mirror + "/" + entry, withDestinationPath: real + "/" + entry)
    }
    return [(source: parent, target: real), (source: mirror, target: parent)]
  }

  /// `text` as one single-quoted shell word.
  static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}
